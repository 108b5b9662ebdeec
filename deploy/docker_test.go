package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dockerEnsure runs deploy/docker.sh's docker_ensure with fake docker, dockerd, pgrep, id and
// systemctl first in PATH (and no /usr/sbin, so the machine's own dockerd is never found or
// started): the fake docker answers once the fake dockerd has written its marker. It returns the
// script's output and whether it succeeded.
func dockerEnsure(t *testing.T, dir string, env ...string) (string, bool) {
	t.Helper()
	script := `set -euo pipefail
log() { printf 'test: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
. ./docker.sh
docker_ensure`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append([]string{"PATH=" + dir + ":/usr/bin:/bin", "FROGNANO_DOCKERD_LOG=" + filepath.Join(dir, "dockerd.log"),
		"FROGNANO_DOCKERD_PIDFILE=" + filepath.Join(dir, "docker.pid")}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// fakeTools writes the fakes into a new folder; dockerd is left out when withDockerd is false,
// and answers never when neverAnswers is true.
func fakeTools(t *testing.T, withDockerd, neverAnswers bool) string {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "engine-up")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("docker", `[ -f '`+marker+`' ]`)
	write("pgrep", `exit 1`)
	write("id", `echo 0`)
	write("systemctl", `exit 1`)
	if withDockerd {
		if neverAnswers {
			write("dockerd", `echo "fake engine: cannot start"; sleep 5`)
		} else {
			write("dockerd", `echo "fake engine started"; touch '`+marker+`'; sleep 5`)
		}
	}
	return dir
}

// TestDockerEnsureStartsTheLocalEngine: a machine whose engine is down (a CI machine with no
// init system) gets it started in the background, and the script goes on once it answers.
func TestDockerEnsureStartsTheLocalEngine(t *testing.T) {
	dir := fakeTools(t, true, false)
	// A pid file an engine that died left behind (no process has that pid) is removed.
	pidfile := filepath.Join(dir, "docker.pid")
	if err := os.WriteFile(pidfile, []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := dockerEnsure(t, dir)
	if !ok {
		t.Fatalf("docker_ensure failed:\n%s", out)
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("the stale pid file was kept (%v)", err)
	}
	if !strings.Contains(out, "starting "+filepath.Join(dir, "dockerd")+" in the background") || !strings.Contains(out, "Docker engine answers") {
		t.Fatalf("output does not say the engine was started:\n%s", out)
	}
	log, err := os.ReadFile(filepath.Join(dir, "dockerd.log"))
	if err != nil || !strings.Contains(string(log), "fake engine started") {
		t.Fatalf("dockerd's output is not in its log (%v): %q", err, log)
	}
	// An engine that answers is left alone: nothing is started a second time.
	out, ok = dockerEnsure(t, dir)
	if !ok || strings.Contains(out, "starting") {
		t.Fatalf("an answering engine was started again (ok=%v):\n%s", ok, out)
	}
}

// TestDockerEnsureRefuses: what it does not own or cannot start, it does not touch, and it says why.
func TestDockerEnsureRefuses(t *testing.T) {
	cases := []struct {
		name         string
		withDockerd  bool
		neverAnswers bool
		env          []string
		want         string
	}{
		{"remote engine", true, false, []string{"DOCKER_HOST=tcp://10.0.0.9:2376"}, "no Docker engine answers at tcp://10.0.0.9:2376"},
		{"no dockerd", false, false, nil, "dockerd is not installed"},
		{"engine never answers", true, true, []string{"FROGNANO_DOCKER_WAIT=2"}, "did not answer within 2s"},
		{"another context", true, false, []string{"DOCKER_CONTEXT=remote-builder"}, "through the docker context 'remote-builder'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := fakeTools(t, c.withDockerd, c.neverAnswers)
			out, ok := dockerEnsure(t, dir, c.env...)
			if ok {
				t.Fatalf("docker_ensure succeeded:\n%s", out)
			}
			if !strings.Contains(out, c.want) {
				t.Fatalf("output lacks %q:\n%s", c.want, out)
			}
			if (c.name == "remote engine" || c.name == "another context") && strings.Contains(out, "starting") {
				t.Fatalf("a local engine was started for a remote DOCKER_HOST:\n%s", out)
			}
			if c.neverAnswers && !strings.Contains(out, "fake engine: cannot start") {
				t.Fatalf("the engine's log is not shown:\n%s", out)
			}
		})
	}
}

// TestDockerEnsureNotRoot: a user who is not root is told how to start the engine; nothing starts.
func TestDockerEnsureNotRoot(t *testing.T) {
	dir := fakeTools(t, true, false)
	if err := os.WriteFile(filepath.Join(dir, "id"), []byte("#!/bin/bash\necho 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, ok := dockerEnsure(t, dir)
	if ok || !strings.Contains(out, "systemctl start docker") || strings.Contains(out, "starting") {
		t.Fatalf("ok=%v, output:\n%s", ok, out)
	}
}
