package runner_test

import (
	"testing"
	"time"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// TestUsageSumsAttempts: a run of several attempts uses what all of them used; the test runs
// they share (the tests before, an identical patch's tests after) count once.
func TestUsageSumsAttempts(t *testing.T) {
	t.Parallel()
	before := &runner.TestRun{Outcome: verify.Outcome{Duration: 10 * time.Second}}
	sharedAfter := &runner.TestRun{Outcome: verify.Outcome{Duration: 4 * time.Second}}
	a1 := &runner.Result{Leaf: &leaf.Result{PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 800, ModelTime: 20 * time.Second, ToolTime: 2 * time.Second},
		TestsBefore: before, TestsAfter: sharedAfter}
	a2 := &runner.Result{Leaf: &leaf.Result{PromptTokens: 500, CompletionTokens: 50, ModelTime: 10 * time.Second, ToolTime: time.Second},
		TestsBefore: before, TestsAfter: sharedAfter}
	a3 := &runner.Result{Leaf: &leaf.Result{PromptTokens: 1, CompletionTokens: 1}, TestsBefore: before,
		TestsAfter: &runner.TestRun{Outcome: verify.Outcome{Duration: 3 * time.Second}}}
	a1.Attempts = &runner.AttemptSet{Attempts: []runner.Attempt{{K: 1, Result: a1}, {K: 2, Result: a2}, {K: 3, Result: a3}, {K: 4, Err: errFake}}}
	got := a1.Usage()
	want := runner.Usage{PromptTokens: 1501, CompletionTokens: 151, CachedTokens: 800, ModelTime: 30 * time.Second, ToolTime: 3 * time.Second,
		TestTime: 17 * time.Second, Attempts: 4}
	if got != want {
		t.Errorf("Usage = %+v\nwant    %+v", got, want)
	}
	if one := a2.Usage(); one.Attempts != 1 || one.TestTime != 14*time.Second || one.PromptTokens != 500 {
		t.Errorf("a run of one: %+v", one)
	}
	if line := report.UsageLine(got); line != "Usage: 1501 prompt tokens (800 cached), 151 completion tokens; model 30s, tools 3s, tests 17s; sandboxes 0s CPU, peak memory 0 B; 4 attempts." {
		t.Errorf("UsageLine = %q", line)
	}
}

var errFake = &runner.InfraError{}
