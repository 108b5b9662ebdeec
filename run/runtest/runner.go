package runtest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
)

// RunFunc is what the scripted agent does for one run.
type RunFunc func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error)

// Runner is a run.Runner that calls the RunFunc it was Set (GoodOutcome by default) and
// records every spec it was given.
type Runner struct {
	// Ceiling is the operator's ceiling on a run's attempts it tells (run.AttemptsCeiling);
	// 0: none. Set it before a run works.
	Ceiling int

	calls atomic.Int32
	mu    sync.Mutex
	specs []run.RunSpec
	fn    RunFunc
}

var _ run.Runner = (*Runner)(nil)

// MaxAttempts is Ceiling (run.AttemptsCeiling).
func (r *Runner) MaxAttempts() int { return r.Ceiling }

// NewRunner returns a Runner whose every run ends with GoodOutcome.
func NewRunner() *Runner {
	r := &Runner{}
	r.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return GoodOutcome(), nil
	})
	return r
}

func (r *Runner) Run(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
	r.calls.Add(1)
	r.mu.Lock()
	r.specs = append(r.specs, spec)
	fn := r.fn
	r.mu.Unlock()
	return fn(ctx, spec, progress)
}

// Set makes fn the agent's answer from the next run on.
func (r *Runner) Set(fn RunFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn = fn
}

// Calls is how many runs the agent was asked for.
func (r *Runner) Calls() int { return int(r.calls.Load()) }

// Specs are the specs of those runs, in order.
func (r *Runner) Specs() []run.RunSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]run.RunSpec(nil), r.specs...)
}

// GoodOutcome is an agent run that made a patch: 12 steps, 3,400 tokens, a PR body, a
// trajectory with a NUL escape and a report with a NUL byte (as hostile tool output can
// produce; PostgreSQL takes neither).
func GoodOutcome() *run.Outcome {
	return &run.Outcome{
		Patch:      []byte("diff --git a/pager.go b/pager.go\n--- a/pager.go\n+++ b/pager.go\n@@ -1 +1 @@\n-a\n+b\n"),
		ExitReason: "agent", FinalMessage: "Fixed.", Steps: 12, PromptTokens: 3000, CompletionTokens: 400,
		ModelTime: 40 * time.Second, ToolTime: 5 * time.Second, TestTime: 3 * time.Second, Elapsed: 50 * time.Second,
		PRBody: "This fixes the pager.", Summary: "The agent changed pager.go.",
		Trajectory: []byte(`{"trajectory_format":"leaf-function-calling","messages":["a\u0000b"]}`),
		Report:     "report\x00text",
	}
}

// Flaky is a transient infrastructure error, marked as githubapp and runner mark theirs.
func Flaky(what string) error { return fault.Transient(errors.New(what + ": connection reset")) }
