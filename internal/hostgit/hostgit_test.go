package hostgit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/hostgit"
)

// TestRuleHoldsAgainstTheHostAndTheRepository: what a user's configuration, this process's
// GIT_* variables and a repository's own hooks and fsmonitor ask for never happens. Not
// parallel: it sets this process's HOME and GIT_DIR.
func TestRuleHoldsAgainstTheHostAndTheRepository(t *testing.T) {
	repo, _ := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, repo, "config", "core.fsmonitor", script)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[alias]\n\tfrog = status\n[user]\n\tname = Host User\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere.git"))
	ctx := context.Background()

	if _, err := hostgit.Run(ctx, repo, nil, nil, "frog"); err == nil {
		t.Error("an alias of the user's ~/.gitconfig worked")
	}
	out, err := hostgit.Run(ctx, repo, nil, nil, "rev-parse", "--absolute-git-dir")
	if err != nil || strings.TrimSpace(string(out)) != filepath.Join(repo, ".git") {
		t.Errorf("git dir = %q, %v; want the repository's own, whatever GIT_DIR says", out, err)
	}
	if _, err := hostgit.Run(ctx, repo, nil, nil, "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	ident := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if _, err := hostgit.Run(ctx, repo, ident, nil, "commit", "-q", "--allow-empty", "-m", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hook or the fsmonitor of the repository ran")
	}
}

func TestErrorIsTypedAndBounded(t *testing.T) {
	t.Parallel()
	repo, _ := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	_, err := hostgit.Run(ctx, repo, nil, nil, "-c", "x.y=z", "cat-file", "-p", strings.Repeat("0", 40))
	var ge *hostgit.Error
	if !errors.As(err, &ge) || ge.Cmd != "cat-file" || ge.Stderr == "" {
		t.Fatalf("err = %#v, want a *hostgit.Error of cat-file with its stderr", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("err = %v, want the exit status inside", err)
	}
	// A long stderr keeps its end.
	long := strings.Repeat("é", hostgit.MaxStderr) + "the end"
	_, err = hostgit.Run(ctx, repo, nil, []byte(long), "-c", "alias.say=!f() { cat >&2; exit 3; }; f", "say")
	if !errors.As(err, &ge) || len(ge.Stderr) > hostgit.MaxStderr || !strings.HasSuffix(ge.Stderr, "the end") || !strings.HasPrefix(ge.Stderr, "é") {
		t.Errorf("stderr of %d bytes kept as %d bytes ending %q", len(long), len(ge.Stderr), ge.Stderr[max(len(ge.Stderr)-10, 0):])
	}
}

func TestRunLimited(t *testing.T) {
	t.Parallel()
	repo, _ := gittest.Repo(t, map[string]string{"a.txt": strings.Repeat("a\n", 1000)})
	ctx := context.Background()
	out, err := hostgit.RunLimited(ctx, repo, 1<<20, "show", "HEAD:a.txt")
	if err != nil || len(out) != 2000 {
		t.Fatalf("RunLimited under the limit = %d bytes, %v", len(out), err)
	}
	var le *hostgit.OutputLimitError
	if _, err := hostgit.RunLimited(ctx, repo, 100, "show", "HEAD:a.txt"); !errors.As(err, &le) || le.Cmd != "show" {
		t.Errorf("RunLimited over the limit: %v, want an *OutputLimitError", err)
	}
	var ge *hostgit.Error
	if _, err := hostgit.RunLimited(ctx, repo, 100, "show", "HEAD:missing"); !errors.As(err, &ge) {
		t.Errorf("RunLimited of a failing git: %v, want a *hostgit.Error", err)
	}
}
