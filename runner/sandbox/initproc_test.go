package sandbox_test

import (
	"strings"
	"testing"
)

// TestContainerProcessesOutOfReach: the container's own processes (docker-init and the main
// sleep, whose death would end the sandbox) run as another user than the model's commands,
// so a command can neither stop, kill nor ptrace them, and the sandbox outlives the attempt.
func TestContainerProcessesOutOfReach(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	r := bash(t, sb, `for p in /proc/[0-9]*; do
  uid=$(awk '/^Uid:/ {print $2}' $p/status 2>/dev/null)
  [ "$uid" = 65534 ] && echo "init $(cat $p/comm)"
done
kill -STOP 1 2>&1 && echo "stopped init"
for p in /proc/[0-9]*; do
  [ "$(awk '/^Uid:/ {print $2}' $p/status 2>/dev/null)" = 65534 ] || continue
  kill -9 ${p#/proc/} 2>&1 && echo "killed ${p#/proc/}"
  python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, int(sys.argv[1]), 0, 0)  # PTRACE_ATTACH
print('ptrace', r, ctypes.get_errno())
" ${p#/proc/}
done`)
	out := r.stdout + r.stderr
	if !strings.Contains(out, "init docker-init") || !strings.Contains(out, "init sleep") {
		t.Fatalf("docker-init and sleep should run as 65534:\n%s", out)
	}
	if strings.Contains(out, "stopped init") || strings.Contains(out, "killed") || strings.Contains(out, "ptrace 0 ") {
		t.Fatalf("the model's command reached the container's own processes:\n%s", out)
	}
	if strings.Count(out, "Operation not permitted") < 3 || strings.Count(out, "ptrace -1 1") < 2 {
		t.Errorf("want EPERM for the signals and ptrace:\n%s", out)
	}
	// Still alive: a second command runs.
	if r := bash(t, sb, "echo alive"); strings.TrimSpace(r.stdout) != "alive" {
		t.Fatalf("the sandbox did not survive: %+v", r)
	}
}
