package sandbox_test

import (
	"strings"
	"testing"
)

// TestIsolation checks the promises of shared/security.md from inside the container, through
// the Bash tool, as the model would see them.
func TestIsolation(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")

	t.Run("OnlyLoopbackInterface", func(t *testing.T) {
		r := bash(t, sb, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "lo" {
			t.Errorf("interfaces = %q (exit %d), want only lo", r.stdout, r.code)
		}
	})
	t.Run("NameResolutionFails", func(t *testing.T) {
		// getent only asks the resolver; with no interface but lo nothing leaves the container.
		r := bash(t, sb, "getent hosts example.com")
		if r.code == 0 {
			t.Errorf("getent hosts example.com succeeded: %q", r.stdout)
		}
	})
	t.Run("NotRoot", func(t *testing.T) {
		r := bash(t, sb, "id -u; id -g")
		if got := strings.Fields(r.stdout); len(got) != 2 || got[0] == "0" || got[0] != "1000" || got[1] != "1000" {
			t.Errorf("uid/gid = %q, want 1000 1000", r.stdout)
		}
	})
	t.Run("NoCapabilitiesNoNewPrivsSeccomp", func(t *testing.T) {
		r := bash(t, sb, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status")
		want := map[string]string{
			"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
			"NoNewPrivs": "1", "Seccomp": "2",
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			k, v, _ := strings.Cut(line, ":")
			got[k] = strings.TrimSpace(v)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q (status: %q)", k, got[k], v, r.stdout)
			}
		}
	})
	t.Run("NoDockerSocket", func(t *testing.T) {
		r := bash(t, sb, "ls /var/run/docker.sock /run/docker.sock")
		if r.code == 0 {
			t.Errorf("a docker socket is there: %q", r.stdout)
		}
		// No Unix socket of any kind is mounted in.
		r = bash(t, sb, "find / \\( -path /proc -o -path /sys \\) -prune -o -type s -print 2>/dev/null")
		if strings.TrimSpace(r.stdout) != "" {
			t.Errorf("sockets found in the sandbox: %q", r.stdout)
		}
	})
	t.Run("NoSecretInEnvironment", func(t *testing.T) {
		r := bash(t, sb, "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null; done")
		if r.code != 0 || !strings.Contains(r.stdout, "HOME=/tmp") {
			t.Fatalf("reading the environment failed: %s", r.raw)
		}
		if strings.Contains(r.stdout, canary) || strings.Contains(r.stdout, "FROGNANO_TEST_CANARY") || strings.Contains(r.stdout, "GITHUB_TOKEN") {
			t.Errorf("the host's secret reached the sandbox environment:\n%s", r.stdout)
		}
		for _, v := range []string{"PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp"} {
			if !strings.Contains(r.stdout, v+"\n") {
				t.Errorf("environment lacks %s", v)
			}
		}
		if strings.Contains(strings.ToLower(r.stdout), "_proxy=") {
			t.Errorf("a proxy variable is set:\n%s", r.stdout)
		}
	})
	t.Run("RootFilesystemReadOnly", func(t *testing.T) {
		for _, p := range []string{"/usr/frognano-probe", "/etc/frognano-probe", "/home/frognano/probe", "/opt/frognano/probe"} {
			if r := bash(t, sb, "touch "+p); r.code == 0 {
				t.Errorf("writing %s succeeded; the root filesystem and the executor must not be writable", p)
			}
		}
		if r := bash(t, sb, "touch /workspace/probe /tmp/probe && rm /workspace/probe /tmp/probe"); r.code != 0 {
			t.Errorf("the workspace and /tmp must be writable: %s", r.raw)
		}
	})
	t.Run("TmpAllowsExecutables", func(t *testing.T) {
		// Test runners (go test, compiled C tests) build and run binaries under /tmp.
		r := bash(t, sb, "cp /bin/true /tmp/t && /tmp/t && echo ran")
		if r.code != 0 || !strings.Contains(r.stdout, "ran") {
			t.Errorf("running a binary from /tmp failed: %s", r.raw)
		}
	})
	t.Run("ExecutorOutsideWorkspace", func(t *testing.T) {
		if r := bash(t, sb, "git status --porcelain --ignored"); r.code != 0 || r.stdout != "" {
			t.Errorf("the copied checkout is not clean (exit %d): %q %q", r.code, r.stdout, r.stderr)
		}
		if r := bash(t, sb, "stat -c '%U:%G %a' /opt/frognano/frognano-executor"); strings.TrimSpace(r.stdout) != "root:root 555" {
			t.Errorf("executor owner and mode = %q, want root:root 555", r.stdout)
		}
	})
}
