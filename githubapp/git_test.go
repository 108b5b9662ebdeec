package githubapp

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/fault"
)

// hostGit runs git in dir the way a test inspects results, isolated from the machine's config.
func hostGit(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestClone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dir := t.TempDir() // an existing, empty directory is fine (the queue worker passes one)
	head, branch, err := b.client.Clone(context.Background(), dir)
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	main := b.gh.Branch(b.repo, "main")
	if head != main.SHA || branch != "main" {
		t.Errorf("Clone = %s, %s; want %s, main", head, branch, main.SHA)
	}
	got, err := os.ReadFile(filepath.Join(dir, "calc", "add.go"))
	if err != nil || string(got) != testFiles["calc/add.go"] {
		t.Errorf("cloned calc/add.go = %q, %v", got, err)
	}
	config, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range b.gh.IssuedTokens() {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
		if bytes.Contains(config, []byte(tok)) || bytes.Contains(config, []byte(basic)) {
			t.Errorf(".git/config contains the installation token:\n%s", config)
		}
	}
	if !bytes.Contains(config, []byte(b.gh.URL+"/"+testOwner+"/"+testRepo+".git")) {
		t.Errorf(".git/config has no plain remote URL:\n%s", config)
	}
	// The remote really needs the token: the same clone without it is refused.
	if out, err := hostGit(t, t.TempDir(), "clone", b.gh.URL+"/"+testOwner+"/"+testRepo+".git", "anon"); err == nil {
		t.Errorf("anonymous clone succeeded: %s", out)
	}
}

func TestCloneFailsWithoutAccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The installation token expires or is revoked between runs; Clone fetches a valid one.
	b.gh.RevokeTokens()
	// ghinstallation caches the token for an hour, so a revoked token makes git fail: that is
	// an infrastructure failure worth retrying, and must say so.
	_, _, err := b.client.Clone(context.Background(), filepath.Join(t.TempDir(), "c"))
	if err == nil {
		t.Fatal("Clone with a revoked token succeeded")
	}
	if !fault.IsTransient(err) {
		t.Errorf("IsTransient(%v) = false, want true", err)
	}
	for _, tok := range b.gh.IssuedTokens() {
		if strings.Contains(err.Error(), tok) {
			t.Errorf("error quotes the token: %v", err)
		}
	}
}
