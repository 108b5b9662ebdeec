package patch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testRepo is a real git repository in a temp directory, used to produce diffs the way
// the sandbox does and to check that filtered patches apply with the real git.
type testRepo struct {
	t    testing.TB
	dir  string
	home string
	base string // the commit the diff is taken against
}

// newRepo creates a repository holding files (path -> content; a value starting with
// "->" makes a symlink to the rest) and commits them as the base.
func newRepo(t testing.TB, files map[string]string) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests need the git CLI: %v", err)
	}
	r := &testRepo{t: t, dir: t.TempDir(), home: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	for p, c := range files {
		r.write(p, c)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", "base")
	r.base = strings.TrimSpace(r.git("rev-parse", "HEAD"))
	return r
}

func (r *testRepo) env() []string {
	// An isolated git: no user or system config can change the diff format.
	return append(os.Environ(),
		"HOME="+r.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "LC_ALL=C")
}

func (r *testRepo) gitIn(dir string, stdin []byte, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	return r.gitIn(r.dir, nil, args...)
}

func (r *testRepo) write(p, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	_ = os.Remove(full)
	if target, ok := strings.CutPrefix(content, "->"); ok {
		if err := os.Symlink(target, full); err != nil {
			r.t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) remove(p string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(p))); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) chmod(p string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(filepath.Join(r.dir, filepath.FromSlash(p)), mode); err != nil {
		r.t.Fatal(err)
	}
}

// diff stages everything and returns the diff against the base exactly as the Leaf
// harness takes it, along with the staged tree id.
func (r *testRepo) diff() (diff []byte, tree string) {
	r.t.Helper()
	r.git("add", "-A")
	d := r.git("-c", "core.quotePath=true", "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
		"--src-prefix=a/", "--dst-prefix=b/", r.base)
	return []byte(d), strings.TrimSpace(r.git("write-tree"))
}

// applyClean applies patch in a fresh clone at the base commit (git apply --check,
// then git apply --index) and returns the resulting tree id.
func (r *testRepo) applyClean(patch []byte) string {
	r.t.Helper()
	dst := filepath.Join(r.t.TempDir(), "clone")
	r.gitIn(r.dir, nil, "clone", "-q", "--no-checkout", r.dir, dst)
	r.gitIn(dst, nil, "checkout", "-q", r.base)
	r.gitIn(dst, patch, "apply", "--check", "-")
	r.gitIn(dst, patch, "apply", "--index", "-")
	return strings.TrimSpace(r.gitIn(dst, nil, "write-tree"))
}

// binary returns n deterministic bytes that git treats as binary.
func binary(n int, seed byte) string {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	b[0] = 0
	return string(b)
}

// baseSymlink implements Options.BaseSymlink from the base commit, as the host does
// from its clean clone.
func (r *testRepo) baseSymlink(p string) (string, bool) {
	r.t.Helper()
	out := r.git("ls-tree", "-z", r.base, "--", p)
	meta, _, ok := strings.Cut(out, "\t")
	fields := strings.Fields(meta)
	if !ok || len(fields) != 3 || fields[0] != ModeSymlink {
		return "", false
	}
	return r.git("cat-file", "blob", fields[2]), true
}
