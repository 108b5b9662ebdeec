// Package gittest makes git repositories for tests with the real git CLI: a folder of files
// committed once, and git commands that fail the test instead of returning an error. It is
// imported only from _test.go files: nothing in frognano's programs may depend on it.
package gittest

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs `git -C dir args...` and returns its output without surrounding white space; a
// failure fails the test with git's output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// In returns git in dir with a test identity (for commits): In(t, dir)("commit", "-m", "x").
// Like Git, a failure fails the test.
func In(t testing.TB, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		return Git(t, dir, append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
	}
}

// Commit makes dir a repository on branch main holding everything in it in one commit with
// message, by a test identity, and returns the commit.
func Commit(t testing.TB, dir, message string) string {
	t.Helper()
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "add", "-A")
	In(t, dir)("commit", "-q", "-m", message)
	return Git(t, dir, "rev-parse", "HEAD")
}

// Repo makes a repository in a fresh folder holding files (path → content, written
// executable; a value starting with "->" is a symlink to the rest) in one commit, "base", and
// returns the folder and the commit.
func Repo(t testing.TB, files map[string]string) (dir, commit string) {
	t.Helper()
	dir = t.TempDir()
	Write(t, dir, files)
	return dir, Commit(t, dir, "base")
}

// BigRepo makes a repository in a fresh folder of about size bytes, half working tree and
// half .git objects (random content does not compress), with files (as Repo writes them) in
// one commit, "big", and returns the folder.
func BigRepo(t testing.TB, size int, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	const fileSize = 128 << 10
	buf := make([]byte, fileSize)
	for i := range size / 2 / fileSize {
		_, _ = rand.Read(buf)
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%16), fmt.Sprintf("f%03d.bin", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Write(t, dir, files)
	Commit(t, dir, "big")
	return dir
}

// Write writes files (as Repo does: path → content, executable; "->target" a symlink) below
// dir, making folders as needed.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(c), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
