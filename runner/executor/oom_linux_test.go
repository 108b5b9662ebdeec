package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBashStartsWithItsOOMScore: what bash starts first has oom_score_adj 1000 too, however
// late the executor gets to anything after the start. The test holds the executor right after
// bash started (afterBashStart) until the command's first child has written down its score;
// a score written into bash after the start would come too late for it (0). The executor's own
// score is back to what it was once the command started. Not parallel: it sets package state.
func TestBashStartsWithItsOOMScore(t *testing.T) {
	f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("opening the test's own oom_score_adj: %v", err)
	}
	defer f.Close()
	own := readFile(t, "/proc/self/oom_score_adj")
	dir := setup(t, nil)
	first := filepath.Join(dir, "first")
	ownOOMScore = f
	hold := afterBashStart
	afterBashStart = func(*exec.Cmd) {
		// Bounded only so that a broken command cannot hang the test; the check below fails.
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(first); err == nil {
				return
			}
		}
	}
	defer func() { ownOOMScore, afterBashStart = nil, hold }()
	got := run(t, dir, "Bash", map[string]any{"command": "cat /proc/self/oom_score_adj > first.tmp && mv first.tmp first; cat first"})
	if want := "Exit code: 0\nSTDOUT:\n1000\n\nSTDERR:\n"; got != want {
		t.Errorf("the command's first process: %q, want %q", got, want)
	}
	if now := readFile(t, "/proc/self/oom_score_adj"); now != own {
		t.Errorf("the executor's own oom_score_adj is %q after the start, was %q", strings.TrimSpace(now), strings.TrimSpace(own))
	}
}
