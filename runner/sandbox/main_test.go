package sandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/runner/sandbox"
)

// Shared by every test: one Docker client, one executor binary built from this module, and a
// canary secret in this process's environment that must never reach a container.
var (
	docker       *client.Client
	executorPath string
	canary       string
)

func TestMain(m *testing.M) {
	dockertest.Main(m, dockertest.Options{Tests: "the sandbox tests", Executor: true}, func(e dockertest.Env) {
		docker, executorPath = e.Docker, e.Executor
		var rnd [12]byte
		_, _ = rand.Read(rnd[:])
		canary = "ghs_canary" + hex.EncodeToString(rnd[:])
		os.Setenv("FROGNANO_TEST_CANARY", canary)
		os.Setenv("GITHUB_TOKEN", canary)
	})
}

// testConfig is the default config with the test's executor and a small footprint.
func testConfig() sandbox.Config {
	cfg := sandbox.DefaultConfig()
	cfg.ExecutorPath = executorPath
	cfg.Memory = 512 << 20
	cfg.CPUs = 1
	cfg.PidsLimit = 128
	cfg.TmpfsSize = 256 << 20
	cfg.Owner = "sandbox-test"
	return cfg
}

// newSandbox makes a sandbox that is closed when the test ends.
func newSandbox(t testing.TB, cfg sandbox.Config, purpose string) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(context.Background(), docker, cfg, strings.ReplaceAll(t.Name(), "/", "-"), purpose)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sb
}

// readySandbox makes a sandbox holding repo (a fresh test repository when empty) with the
// executor started.
func readySandbox(t testing.TB, cfg sandbox.Config, repo string) *sandbox.Sandbox {
	t.Helper()
	if repo == "" {
		repo = makeRepo(t)
	}
	sb := newSandbox(t, cfg, "agent")
	ctx := context.Background()
	if err := sb.CopyRepo(ctx, repo); err != nil {
		t.Fatalf("CopyRepo: %v", err)
	}
	if err := sb.StartExecutor(ctx); err != nil {
		t.Fatalf("StartExecutor: %v", err)
	}
	return sb
}

// makeRepo creates a small git repository whose config holds everything a hostile or careless
// host config could: a remote URL with a token, an extra header, a credential helper, an include,
// a hooks path, an fsmonitor, and an executable hook.
func makeRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("README.md", "# demo\n", 0o644)
	write("pkg/calc.py", "def add(a, b):\n    return a - b\n", 0o644)
	write("tests/test_calc.py", "from pkg.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n", 0o644)
	write("run.sh", "#!/bin/sh\necho run\n", 0o755)
	if err := os.Symlink("pkg/calc.py", filepath.Join(dir, "calc-link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "outside-link")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	git("remote", "add", "origin", "https://x-access-token:"+canary+"@github.example.invalid/o/r.git")
	git("config", "http.https://github.example.invalid/.extraheader", "AUTHORIZATION: basic "+canary)
	git("config", "credential.helper", "store --file=/root/.git-credentials")
	git("config", "url.https://evil.example.invalid/.insteadOf", "https://github.example.invalid/")
	git("config", "include.path", "/root/.gitconfig-extra")
	git("config", "core.hooksPath", "/tmp/hooks")
	git("config", "core.fsmonitor", "touch /tmp/pwned")
	write(".git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
	write(".git/FETCH_HEAD", "deadbeef\t\tbranch 'main' of https://x-access-token:"+canary+"@github.example.invalid/o/r\n", 0o644)
	return dir
}

// bashResult is a parsed Bash observation.
type bashResult struct {
	code           int
	stdout, stderr string
	raw            string
}

var bashObservation = regexp.MustCompile(`(?s)^(?:Exit code: (-?\d+)|Timed out after [0-9.]+s)\nSTDOUT:\n(.*)\nSTDERR:\n(.*)$`)

// bash runs command through the executor's Bash tool, as the agent would.
func bash(t testing.TB, sb *sandbox.Sandbox, command string) bashResult {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"command": command, "timeout": 120})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	obs, err := sb.Call(ctx, "Bash", string(args))
	if err != nil {
		t.Fatalf("Call(Bash, %q): %v", command, err)
	}
	m := bashObservation.FindStringSubmatch(obs)
	if m == nil {
		t.Fatalf("Bash observation for %q has an unexpected shape:\n%s", command, obs)
	}
	code := -1
	if m[1] != "" {
		code, _ = strconv.Atoi(m[1])
	}
	return bashResult{code: code, stdout: m[2], stderr: m[3], raw: obs}
}
