package sandbox_test

import (
	"testing"
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestUsageMeasuredAtClose: each sandbox sharing a Usage adds its CPU time (the engine's cgroup
// counter) as Close removes it, and its peak memory (the highest of them, never past the limit):
// a sandbox that burns CPU and allocates 64 MiB counts at least that, a second one adds its own.
func TestUsageMeasuredAtClose(t *testing.T) {
	t.Parallel()
	u := &sandbox.Usage{}
	cfg := testConfig()
	cfg.Memory = 256 << 20
	cfg.Usage = u
	sb := readySandbox(t, cfg, "")
	if r := bash(t, sb, `python3 -c 'import time
b = bytearray(64 << 20)
for i in range(0, len(b), 4096): b[i] = 1
t = time.process_time()
while time.process_time() - t < 0.5: pass
print("ok")'`); r.code != 0 {
		t.Fatalf("the load failed: %s", r.raw)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	cpu, peak := u.CPU(), u.Peak()
	if measured, missed := u.Sandboxes(); measured != 1 || missed != 0 {
		t.Fatalf("measured %d, missed %d sandboxes", measured, missed)
	}
	if cpu < 500*time.Millisecond || peak < 64<<20 || peak > cfg.Memory {
		t.Errorf("CPU %s, peak %d bytes; want at least 0.5 s and 64 MiB, at most the limit", cpu, peak)
	}
	if err := sb.Close(); err != nil { // idempotent: not measured twice
		t.Fatal(err)
	}
	second := readySandbox(t, cfg, "")
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if measured, _ := u.Sandboxes(); measured != 2 || u.CPU() <= cpu || u.Peak() != peak {
		t.Errorf("after a second sandbox: %d measured, CPU %s (was %s), peak %d (was %d); want 2, more CPU, the same peak",
			measured, u.CPU(), cpu, u.Peak(), peak)
	}
}
