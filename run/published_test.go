package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

// TestSucceededRunHandsOverWhatItPublished: a run's success hands the pull request and the
// commit it published to the Store's Published hook (package outcome's row) in the
// transaction that records it: an issue run's is frognano's pull request for the issue, a
// follow-up's the pull request it added a commit to; a run that published nothing hands
// nothing; and when the hook fails, the end rolls back and the retry publishes again and hands
// it over then, so no published pull request goes unfollowed for want of a database; a hook
// that fails for good is logged and never fails the run whose pull request GitHub shows.
func TestSucceededRunHandsOverWhatItPublished(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.FailPublished(fault.Transient(fmt.Errorf("the database went away")))
	if r := p.Work(t, id, 1); !r.Retried() {
		t.Fatalf("attempt 1 = %v, want the failed hook to make it retried", r)
	}
	if r := p.Row(t, id); r.State == run.StateSucceeded {
		t.Fatalf("the run ended as succeeded though its publication was not recorded: %+v", r)
	}
	if r := p.Work(t, id, 2); !r.Completed() {
		t.Fatalf("attempt 2 = %v", r)
	}
	got := p.Published()
	if len(got) != 1 || len(p.Repo.Publishes()) != 2 {
		t.Fatalf("published %+v after %d publishes, want one hand-over after two", got, len(p.Repo.Publishes()))
	}
	want := run.Publication{RunID: id, Number: 77, Ours: true, Issue: 7, Head: fmt.Sprintf("%040x", 2), Commits: 2}
	if got[0] != want {
		t.Errorf("hand-over = %+v, want %+v", got[0], want)
	}

	// A follow-up on frognano's pull request #77 (its branch frognano/issue-7).
	f := followUp(t, p, "maintainer", "rename it")
	if r := p.Work(t, f, 1); !r.Completed() {
		t.Fatalf("follow-up: %v", r)
	}
	if got = p.Published(); len(got) != 2 || got[1].RunID != f || got[1].Number != 77 || !got[1].Ours || got[1].Issue != 7 {
		t.Errorf("follow-up's hand-over = %+v", got)
	}

	// A run with no patch publishes nothing and hands nothing over.
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
		return o, nil
	})
	n := p.Label(t, 8)
	if r := p.Work(t, n, 1); !r.Completed() {
		t.Fatalf("run without a patch: %v", r)
	}
	if got = p.Published(); len(got) != 2 {
		t.Errorf("a run without a pull request handed over %+v", got[2:])
	}

	// A hook that fails for good leaves the run succeeded.
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return runtest.GoodOutcome(), nil
	})
	p.FailPublished(fmt.Errorf("a bug"))
	again := p.Label(t, 9)
	if r := p.Work(t, again, 1); !r.Completed() {
		t.Fatalf("run whose hook failed for good: %v", r)
	}
	if r := p.Row(t, again); r.State != run.StateSucceeded || r.PRNumber != 77 {
		t.Errorf("run whose hook failed for good = %+v, want succeeded", r)
	}
}
