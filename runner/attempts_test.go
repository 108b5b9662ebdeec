package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// attemptsBundle is a runner on pyaverage whose attempt k talks to a scripted server of its
// own, playing scripts[k-1].
type attemptsBundle struct {
	runner  *runner.Runner
	spec    runner.Spec
	servers []*leaftest.Server
	opt     runner.AttemptOptions
}

func setupAttempts(t *testing.T, scripts ...string) attemptsBundle {
	t.Helper()
	b := setup(t, "pyaverage", scripts[0], sandbox.DefaultImage)
	servers := []*leaftest.Server{b.model}
	for _, s := range scripts[1:] {
		servers = append(servers, leaftest.NewServer(t, leaftest.LoadModel(t, s)))
	}
	opt := runner.AttemptOptions{N: len(scripts), Leaf: func(k int, c leaf.Config) leaf.Config {
		c.BaseURL = servers[k-1].URL
		return c
	}}
	return attemptsBundle{runner: b.runner, spec: b.spec, servers: servers, opt: opt}
}

// row returns the attempts table's row of attempt k.
func row(t *testing.T, md string, k int) string {
	t.Helper()
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("| %d | ", k)) {
			return l
		}
	}
	t.Fatalf("no row for attempt %d in:\n%s", k, md)
	return ""
}

// TestRunAttemptsChoosesTheFix: four attempts of which only the third fixes the bug; the
// third is chosen, the before-run is shared, each patch was verified by its own after-run,
// the table says what each did, and no sandbox is left.
func TestRunAttemptsChoosesTheFix(t *testing.T) {
	t.Parallel()
	b := setupAttempts(t, "finish-immediately.json", "attempt-wrong-fix.json", "e2e-pyaverage.json", "attempt-unrelated.json")
	res, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	if err != nil {
		t.Fatal(err)
	}
	set := res.Attempts
	if set == nil || len(set.Attempts) != 4 {
		t.Fatalf("attempts = %+v", set)
	}
	if k := set.Attempts[set.Chosen].K; k != 3 || res != set.Attempts[2].Result {
		t.Fatalf("chosen attempt %d (%s), want 3", k, set.Why)
	}
	if !strings.Contains(set.Why, "attempt 3 fixes every test that failed before and breaks none") {
		t.Errorf("why = %q", set.Why)
	}
	if res.Comparison == nil || len(res.Comparison.Fixed) == 0 || len(res.Comparison.Broken) != 0 {
		t.Errorf("comparison = %+v", res.Comparison)
	}
	for _, a := range set.Attempts {
		if a.Err != nil || a.Result == nil {
			t.Fatalf("attempt %d: %v", a.K, a.Err)
		}
		if a.Result.TestsBefore != res.TestsBefore {
			t.Errorf("attempt %d has its own before-run; it must be shared", a.K)
		}
		if ids := containersOf(t, fmt.Sprintf("%s-a%d", b.spec.RunID, a.K)); len(ids) != 0 {
			t.Errorf("attempt %d left containers: %v", a.K, ids)
		}
	}
	if set.Attempts[1].Result.TestsAfter == nil || set.Attempts[1].Result.TestsAfter.ExitCode == 0 {
		t.Error("the wrong fix was not verified as failing by its own after-run")
	}
	md := report.Markdown(res)
	for k, want := range map[int][]string{
		1: {"`agent`", "| 1 |", "empty", "Nothing to change"},
		2: {"| 3 |", "1 file(s)", "len(xs) + 1"},
		3: {"| 5 |", "**chosen**"},
		4: {"| 2 |", "1 file(s)", "NOTES.md"},
	} {
		r := row(t, md, k)
		for _, w := range want {
			if !strings.Contains(r, w) {
				t.Errorf("row %d = %q, want %q in it", k, r, w)
			}
		}
		if k != 3 && strings.Contains(r, "chosen") {
			t.Errorf("row %d says chosen: %q", k, r)
		}
	}
	if !strings.Contains(md, "Chosen: attempt 3, because") || !strings.Contains(md, "<summary>Attempt 2: transcript</summary>") {
		t.Errorf("report lacks the reason or the other transcripts:\n%s", md)
	}
	body := report.PRBody(res, report.Fit{Suffix: "\n\nFixes #12\n"})
	if !strings.Contains(body, "| 3 | `agent` | 5 |") || runeCount(body) > report.GitHubBodyLimit {
		t.Errorf("PR body lacks the table or is too long (%d):\n%s", runeCount(body), body)
	}
}

// TestRunAttemptsNoneFixes: when no attempt fixes the bug, the summary for the status comment
// says what each one tried.
func TestRunAttemptsNoneFixes(t *testing.T) {
	t.Parallel()
	b := setupAttempts(t, "attempt-wrong-fix.json", "attempt-unrelated.json")
	res, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	if err != nil {
		t.Fatal(err)
	}
	sum := report.Summary(res, report.Fit{})
	for _, w := range []string{"len(xs) + 1", "Wrote NOTES.md", "| 1 |", "| 2 |", "Chosen: attempt"} {
		if !strings.Contains(sum, w) {
			t.Errorf("summary lacks %q:\n%s", w, sum)
		}
	}
}

func runeCount(s string) int { return len([]rune(s)) }

// TestRunAttemptsStopEarly: with StopEarly, once the first attempt is verified as fixing
// everything, the other one, stuck in a ten-minute command, is cancelled and its sandbox
// removed; the fix is chosen.
func TestRunAttemptsStopEarly(t *testing.T) {
	t.Parallel()
	b := setupAttempts(t, "e2e-pyaverage.json", "e2e-cancel-in-bash.json")
	b.opt.StopEarly = true
	res, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	if err != nil {
		t.Fatal(err)
	}
	set := res.Attempts
	if set.Chosen != 0 || res.Cancelled || len(res.PatchBytes()) == 0 {
		t.Fatalf("chosen %d (%s), cancelled %v", set.Chosen+1, set.Why, res.Cancelled)
	}
	if other := set.Attempts[1].Result; other == nil || !other.Cancelled {
		t.Errorf("attempt 2 was not stopped: %+v", set.Attempts[1])
	}
	if r := row(t, report.Markdown(res), 2); !strings.Contains(r, "cancelled") {
		t.Errorf("row 2 = %q, want it to say cancelled", r)
	}
	if ids := containersOf(t, b.spec.RunID+"-a2"); len(ids) != 0 {
		t.Errorf("attempt 2 left containers: %v", ids)
	}
}
