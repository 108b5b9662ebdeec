package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/gittest"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

var envRefRE = regexp.MustCompile(`frognano-env:[0-9a-f]{64}`)

// TestRunCommandSetup drives `frognano run` on a repository with a setup script: its output
// on stderr as it runs, which environment the run used, then the cached one; --no-setup; and a
// failing setup, which exits non-zero with the end of its log and a report that says so.
func TestRunCommandSetup(t *testing.T) {
	t.Parallel()
	repo := cliCheckout(t, "gomax")
	if err := os.MkdirAll(filepath.Join(repo, ".frognano"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit := func(script string) {
		if err := os.WriteFile(filepath.Join(repo, envpkg.ScriptFile), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, repo, "add", "-A")
		gittest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "setup")
	}
	commit("echo \"installing $(date +%N)\"\necho fetched > /opt/dep.txt\n")
	executor := cliExecutor(t)
	docker, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()
	refs := map[string]bool{}
	defer func() {
		for ref := range refs {
			_, _ = docker.ImageRemove(context.Background(), ref, image.RemoveOptions{PruneChildren: true})
		}
	}()
	finish := leaftest.LoadModel(t, "finish-immediately.json")
	frognano := func(script leaftest.Script, extra ...string) (string, error) {
		t.Helper()
		model := leaftest.NewServer(t, script)
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "--repo", repo, "--task", "Fix it.", "--out", filepath.Join(t.TempDir(), "out"), "--executor", executor,
			"--test-cmd", "none", "--setup-network", "none"}, extra...)
		err := run(context.Background(), args, envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "512m", "FROGNANO_SANDBOX_CPUS": "1"}), &stdout, &stderr)
		for _, ref := range envRefRE.FindAllString(stderr.String(), -1) {
			refs[ref] = true
		}
		return stderr.String(), err
	}

	log, err := frognano(finish)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	for _, want := range []string{"setup | frognano: running .frognano/setup.sh of commit", "setup | installing ", "built by this run's setup in", "finished: exit reason agent"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	// frognano sandbox ls lists the environment, with its repository's base image.
	ref := envRefRE.FindString(log)
	var ls, lsErr bytes.Buffer
	if err := run(context.Background(), []string{"sandbox", "ls"}, envMap(nil), &ls, &lsErr); err != nil {
		t.Fatalf("sandbox ls: %v\n%s", err, lsErr.String())
	}
	// Its line names its tenant: frognano run's checkouts are "local".
	if ref == "" || !regexp.MustCompile(regexp.QuoteMeta(ref[:32]+"…")+`\s+\S*\s+local\s`).MatchString(ls.String()) || !strings.Contains(ls.String(), "of FROGNANO_ENV_CACHE_SIZE 20.0 GiB") {
		t.Errorf("sandbox ls does not list %s:\n%s", ref, ls.String())
	}
	log, err = frognano(finish)
	if err != nil || !strings.Contains(log, "cached (no setup ran)") || strings.Contains(log, "setup | installing") {
		t.Errorf("second run: %v\n%s", err, log)
	}
	log, err = frognano(finish, "--no-setup")
	if err != nil || !strings.Contains(log, "environment: "+sandbox.DefaultImage+" (disabled)") {
		t.Errorf("--no-setup: %v\n%s", err, log)
	}

	commit("echo 'pip: no matching distribution for nosuchpackage' >&2\nexit 7\n")
	log, err = frognano(leaftest.Script{}) // the model is never called
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "the setup script exited with status 7") {
		t.Fatalf("failing setup: err %v (exit %d)\n%s", err, exitCode(err), log)
	}
	for _, want := range []string{"frognano: setup failed: the setup script exited with status 7", "frognano:   | pip: no matching distribution for nosuchpackage", "exit reason setup_failed"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
}
