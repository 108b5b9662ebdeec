package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// cliExecutor is the static executor the service tests build too (svcBinaries).
func cliExecutor(t *testing.T) string {
	t.Helper()
	executor, _ := svcBinaries(t, false)
	return executor
}

// cliCheckout makes a git repository from testdata/repos/NAME.
func cliCheckout(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "repos", name))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestRunCommand drives `frognano run` as a user would, against real Docker and a scripted
// model: progress on stderr, the three output files, exit status 0.
func TestRunCommand(t *testing.T) {
	t.Parallel()
	model := leaftest.NewServer(t, leaftest.LoadModel(t, "e2e-pyaverage.json"))
	repo := cliCheckout(t, "pyaverage")
	out := filepath.Join(t.TempDir(), "out")
	task := filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(task, []byte("average([2, 4, 6]) returns 6 instead of 4.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", repo, "--task-file", task, "--out", out, "--executor", cliExecutor(t)},
		envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	for _, want := range []string{
		"step   1/100  Glob **/*.py", "Read stats/basic.py", "Edit stats/basic.py", "Bash python3 -m pytest -q", "(final answer)",
		"finished: exit reason agent after 5 steps", "patch: 1 file(s)", "tests before: exit 1", "tests after:  exit 0", "fixed 2, broken 0, still failing 0",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	patch, err := os.ReadFile(filepath.Join(out, "patch.diff"))
	if err != nil || !strings.Contains(string(patch), "+    return total(xs) / len(xs)") {
		t.Errorf("patch.diff = %q, %v", patch, err)
	}
	// The patch applies to the untouched checkout, which the run did not modify.
	apply := exec.Command("git", "-C", repo, "apply", "--check", filepath.Join(out, "patch.diff"))
	if b, err := apply.CombinedOutput(); err != nil {
		t.Errorf("patch.diff does not apply to the checkout: %v\n%s", err, b)
	}
	traj, err := os.ReadFile(filepath.Join(out, "trajectory.json"))
	if err != nil || !bytes.Contains(traj, []byte(`"trajectory_format": "leaf-function-calling"`)) {
		t.Errorf("trajectory.json: %v\n%.300s", err, traj)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"average([2, 4, 6])", "Exit reason: `agent`", "Fixed (2)", "| `stats/basic.py` | modified | 1 | 1 |", "Wall time:"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestRunCommandErrors: each mistake and broken setup gives one clear line and its exit status.
func TestRunCommandErrors(t *testing.T) {
	t.Parallel()
	notRepo := t.TempDir()
	good := map[string]string{"FROGNANO_MODEL_URL": "http://127.0.0.1:1/v1"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"NoCommand", nil, good, 2, "no command given"},
		{"UnknownCommand", []string{"frobnicate"}, good, 2, `unknown command "frobnicate"`},
		{"MissingRepoAndOut", []string{"run", "--task", "x"}, good, 2, "missing --repo and --out"},
		{"NoTask", []string{"run", "--repo", notRepo, "--out", notRepo}, good, 2, "no task"},
		{"BothTasks", []string{"run", "--repo", notRepo, "--out", notRepo, "--task", "a", "--task-file", "b"}, good, 2, "not both"},
		{"MissingTaskFile", []string{"run", "--repo", notRepo, "--out", notRepo, "--task-file", "/nonexistent/task"}, good, 2, "reading the task file"},
		{"NoModel", []string{"run", "--repo", notRepo, "--out", notRepo, "--task", "a"}, map[string]string{}, 2, "FROGNANO_MODEL_URL"},
		{"BadModelURL", []string{"run", "--repo", notRepo, "--out", notRepo, "--task", "a", "--model-url", "ftp://x"}, good, 2, "not an http(s) URL"},
		{"BadEnvNumber", []string{"run", "--repo", notRepo, "--out", notRepo, "--task", "a"}, map[string]string{"FROGNANO_MODEL_URL": "http://x/v1", "FROGNANO_MAX_STEPS": "many"}, 2, "FROGNANO_MAX_STEPS"},
		{"NotACheckout", []string{"run", "--repo", notRepo, "--out", t.TempDir(), "--task", "a"}, good, 3, "not a git checkout"},
		{"ModelUnreachable", []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--out", t.TempDir(), "--task", "a", "--executor", cliExecutor(t)}, good, 3, "unreachable"},
		{"ImageMissing", []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--out", t.TempDir(), "--task", "a", "--image", "frognano-absent:1"}, good, 3, "frognano sandbox build"},
		{"SandboxNoSubcommand", []string{"sandbox"}, good, 2, "build, ls or prune"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, envMap(tt.env), &stdout, &stderr)
			if err == nil {
				t.Fatal("no error")
			}
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d, want %d (%v)", got, tt.code, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestRunCommandWithoutDocker: no engine answers, so one clear line and the setup exit status.
// Not parallel: it points DOCKER_HOST, read by the Docker client from the process environment,
// at a socket that does not exist.
func TestRunCommandWithoutDocker(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--out", t.TempDir(), "--task", "a"},
		envMap(map[string]string{"FROGNANO_MODEL_URL": "http://127.0.0.1:1/v1"}), &stdout, &stderr)
	if err == nil || exitCode(err) != 3 || !strings.Contains(err.Error(), "no Docker engine answers") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v (exit %d), want one line saying no Docker engine answers, exit 3", err, exitCode(err))
	}
}
