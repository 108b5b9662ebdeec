package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// TestIsolation checks the promises of docs/security.md from inside the container, through
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
		// The executor's environ is unreadable (it is non-dumpable), hence "|| true".
		r := bash(t, sb, "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' 2>/dev/null < $f || true; done")
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
	t.Run("DevShmSmallPrivateNoexec", func(t *testing.T) {
		// testConfig's 512 MiB memory limit gives /dev/shm Docker's 64 MiB (the most it gets).
		r := bash(t, sb, "grep ' /dev/shm ' /proc/mounts; df -B1 --output=size /dev/shm | tail -1")
		mnt, size, _ := strings.Cut(strings.TrimSpace(r.stdout), "\n")
		for _, opt := range []string{"nosuid", "nodev", "noexec", "size=65536k", "nr_inodes=16384"} {
			if !strings.Contains(mnt, opt) {
				t.Errorf("/dev/shm is mounted without %s: %q", opt, mnt)
			}
		}
		if strings.TrimSpace(size) != "67108864" {
			t.Errorf("/dev/shm holds %q bytes, want 67108864", size)
		}
		// Writing past it fails; what was written counts against the memory limit and goes.
		r = bash(t, sb, "head -c 100M /dev/zero > /dev/shm/fill; echo rc=$?; du -sB1 /dev/shm/fill | cut -f1; rm -f /dev/shm/fill")
		if !strings.Contains(r.stdout, "rc=1\n67108864\n") || !strings.Contains(r.stderr, "No space left on device") {
			t.Errorf("writing 100 MiB into /dev/shm: %s", r.raw)
		}
		r = bash(t, sb, "cp /bin/true /dev/shm/t && /dev/shm/t; echo rc=$?; rm -f /dev/shm/t")
		if !strings.Contains(r.stdout, "rc=126") {
			t.Errorf("a binary ran from /dev/shm: %s", r.raw)
		}
		info, err := docker.ContainerInspect(context.Background(), sb.ID())
		if err != nil || info.HostConfig.IpcMode != "private" {
			t.Errorf("IPC mode %q (err %v); want private", info.HostConfig.IpcMode, err)
		}
	})
	t.Run("NothingLoggedOnTheHost", func(t *testing.T) {
		// PID 1 belongs to the sandbox user, so its stdout is writable from inside: with a log
		// driver this would fill a file on the host that no limit sees.
		r := bash(t, sb, "head -c 1M /dev/zero > /proc/1/fd/1; echo rc=$?")
		if !strings.Contains(r.stdout, "rc=") {
			t.Fatalf("writing to PID 1's stdout: %s", r.raw)
		}
		info, err := docker.ContainerInspect(context.Background(), sb.ID())
		if err != nil || info.HostConfig.LogConfig.Type != "none" || info.LogPath != "" {
			t.Errorf("log driver %q, log file %q (err %v); want none and no file", info.HostConfig.LogConfig.Type, info.LogPath, err)
		}
		if _, err := docker.ContainerLogs(context.Background(), sb.ID(), container.LogsOptions{ShowStdout: true}); err == nil {
			t.Error("the sandbox's output can be read back from the engine: it was logged")
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
