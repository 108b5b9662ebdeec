package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatalf keeps the message and ends the goroutine.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestRepo(t *testing.T) {
	t.Parallel()
	dir, commit := Repo(t, map[string]string{"a/b.txt": "bee\n", "link": "->a/b.txt"})
	if head := Git(t, dir, "rev-parse", "HEAD"); head != commit || len(commit) != 40 {
		t.Errorf("commit %q, HEAD %q", commit, head)
	}
	if got := Git(t, dir, "ls-tree", "-r", "--format=%(objectmode) %(path)", commit); got != "100755 a/b.txt\n120000 link" {
		t.Errorf("tree:\n%s", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "a/b.txt" {
		t.Errorf("link: %q %v", target, err)
	}
	if st := Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("uncommitted: %q", st)
	}
}

func TestBigRepo(t *testing.T) {
	t.Parallel()
	dir := BigRepo(t, 1<<20, map[string]string{"setup.sh": "echo hi\n"})
	files := strings.Split(Git(t, dir, "ls-files"), "\n")
	if len(files) != 5 || Git(t, dir, "show", "HEAD:setup.sh") != "echo hi" {
		t.Errorf("files %v", files)
	}
}

func TestGitFailsTheTest(t *testing.T) {
	t.Parallel()
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Git(r, t.TempDir(), "rev-parse", "HEAD")
	}()
	<-done
	if !strings.Contains(r.msg, "git rev-parse HEAD") || !strings.Contains(r.msg, "exit status 128") {
		t.Errorf("failure message %q", r.msg)
	}
}
