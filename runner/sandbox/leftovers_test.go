package sandbox_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestBashTimeoutKillsForkBomb: a fork bomb that left the command's process group (setsid)
// and a background process of an earlier call both outlive a plain process-group kill. After
// the Bash timeout the executor kills them all: no process of the sandbox user but the
// executor, the container's init and its main process remains, those two still run (not left
// stopped), the observation is the reference's timeout text, and the host learns how many
// leftovers were killed.
func TestBashTimeoutKillsForkBomb(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.PidsLimit = 64
	sb := readySandbox(t, cfg, "")
	if r := bash(t, sb, "sleep 1000 >/dev/null 2>&1 & echo started"); r.stdout != "started\n" {
		t.Fatalf("background process: %q", r.raw)
	}
	obs, err := callBash(sb, `setsid bash -c 'bomb() { bomb | bomb & }; bomb' >/dev/null 2>&1 &
sleep 100`, 3)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if want := "Timed out after 3.0s\nSTDOUT:\n\nSTDERR:\n"; obs != want {
		t.Errorf("observation %q, want %q", obs, want)
	}
	// The bomb had filled the pids limit: far more than the one background sleep were killed.
	n := sb.LeftoversKilled()
	t.Logf("%d leftover processes killed", n)
	if n < 10 {
		t.Errorf("LeftoversKilled = %d, want the bomb's processes and the background sleep", n)
	}
	procs := containerProcesses(t, sb)
	// The container's main process is what docker-init runs ("sleep infinity" or "sleep N").
	var main string
	for _, p := range procs {
		if rest, ok := strings.CutPrefix(p.args, "/sbin/docker-init -- "); ok {
			main = rest
		}
	}
	var others []string
	for _, p := range procs {
		switch {
		case strings.HasPrefix(p.args, "/sbin/docker-init -- "), p.args == main,
			strings.HasPrefix(p.args, "/opt/frognano/frognano-executor "):
			if strings.Contains(p.stat, "T") {
				t.Errorf("%q was left stopped (%s)", p.args, p.stat)
			}
		default:
			others = append(others, p.stat+" "+p.args)
		}
	}
	if main == "" || main == "sleep 1000" || len(others) > 0 || len(procs) != 3 {
		t.Errorf("after the timeout %d processes run, want init, main (%q) and executor only; others: %q", len(procs), main, others)
	}
	if r := bash(t, sb, "echo alive"); r.stdout != "alive\n" {
		t.Errorf("the sandbox did not recover: %q", r.raw)
	}
}

// TestBashTimeoutWithoutLeftovers: a command that times out alone kills only its own group,
// which is not counted as leftovers.
func TestBashTimeoutWithoutLeftovers(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	obs, err := callBash(sb, "echo before; sleep 100 | cat", 1)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if want := "Timed out after 1.0s\nSTDOUT:\nbefore\n\nSTDERR:\n"; obs != want {
		t.Errorf("observation %q, want %q", obs, want)
	}
	if n := sb.LeftoversKilled(); n != 0 {
		t.Errorf("LeftoversKilled = %d, want 0", n)
	}
}

// A background process without a timeout is left alone, as in the reference.
func TestBackgroundProcessSurvivesWithoutTimeout(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	bash(t, sb, "sleep 1000 >/dev/null 2>&1 &")
	if r := bash(t, sb, "echo second"); r.stdout != "second\n" {
		t.Fatalf("second call: %q", r.raw)
	}
	if !slices.ContainsFunc(containerProcesses(t, sb), func(p proc) bool { return p.args == "sleep 1000" }) {
		t.Error("the background sleep was killed")
	}
}

type proc struct{ stat, args string }

// containerProcesses lists the container's live processes as the host sees them (zombies,
// already dead and waiting for init to reap them, are left out).
func containerProcesses(t *testing.T, sb *sandbox.Sandbox) []proc {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		top, err := docker.ContainerTop(context.Background(), sb.ID(), []string{"-o", "pid,stat,args"})
		if err != nil {
			t.Fatalf("listing the container's processes: %v", err)
		}
		statCol, argsCol := slices.Index(top.Titles, "STAT"), slices.Index(top.Titles, "COMMAND")
		if statCol < 0 || argsCol < 0 {
			t.Fatalf("columns %q", top.Titles)
		}
		var procs []proc
		zombies := false
		for _, p := range top.Processes {
			if strings.HasPrefix(p[statCol], "Z") {
				zombies = true
				continue
			}
			procs = append(procs, proc{stat: p[statCol], args: p[argsCol]})
		}
		if !zombies || time.Now().After(deadline) {
			return procs
		}
		time.Sleep(20 * time.Millisecond) // init reaps them; bounded by the deadline
	}
}
