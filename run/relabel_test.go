package run_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

func checkedOutcome() *run.Outcome {
	o := runtest.GoodOutcome()
	o.Check = &githubapp.CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "success",
		Title: "All 3 test(s) pass with the patch; 1 fixed.", Summary: "| before | after |", Text: "",
		ExternalID: "run-1", StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CompletedAt: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC)}
	return o
}

// TestReportsTheCheckRunEvenOnARetry: the check run goes to Publish, and a retry after
// a failed publish (the agent not run again) reports the same one, kept in the database.
func TestReportsTheCheckRunEvenOnARetry(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return checkedOutcome(), nil
	})
	id := p.Label(t, 7)
	p.Repo.FailNext("Publish", runtest.Flaky("pushing"))
	if r := p.Work(t, id, 1); !r.Retried() {
		t.Fatalf("attempt 1 = %v, want retryable", r)
	}
	if r := p.Work(t, id, 2); !r.Completed() {
		t.Fatalf("attempt 2 = %v", r)
	}
	want := checkedOutcome().Check
	for i, p := range p.Repo.Publishes() {
		if p.Check == nil || !reflect.DeepEqual(*p.Check, *want) {
			t.Errorf("publish %d: check run %+v, want %+v", i+1, p.Check, want)
		}
	}
}

// TestFailedRunRemovesTheLabel: a run that ends without a pull request, or fails for good,
// takes the label off the issue, so that adding it again retries; a run that succeeded leaves it.
func TestFailedRunRemovesTheLabel(t *testing.T) {
	t.Parallel()
	t.Run("NoPatch", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			o := runtest.GoodOutcome()
			o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
			return o, nil
		})
		if r := p.Work(t, p.Label(t, 7), 1); !r.Completed() {
			t.Fatal(r)
		}
		if got := p.Repo.RemovedLabels(); len(got) != 1 || got[0] != "frognano" {
			t.Errorf("removed labels %v, want [frognano]", got)
		}
	})
	t.Run("InfrastructureFailure", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		p.Repo.FailNext("Clone", fault.Permanent(errors.New("repository is gone")))
		if r := p.Work(t, p.Label(t, 7), 1); !r.Final() {
			t.Fatal(r)
		}
		if got := p.Repo.RemovedLabels(); len(got) != 1 {
			t.Errorf("removed labels %v, want [frognano]", got)
		}
	})
	t.Run("Succeeded", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		if r := p.Work(t, p.Label(t, 7), 1); !r.Completed() {
			t.Fatal(r)
		}
		if got := p.Repo.RemovedLabels(); len(got) != 0 {
			t.Errorf("removed labels %v after a success", got)
		}
	})
}

// TestRelabelAfterTheRunEndedUpdatesTheSamePR: labelling again after a run ended (here
// a failed one, then a succeeded one) starts a new run, which publishes to the same branch,
// so the same pull request is updated.
func TestRelabelAfterTheRunEndedUpdatesTheSamePR(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
		return o, nil
	})
	first := p.Label(t, 7)
	if r := p.Work(t, first, 1); !r.Completed() || p.Row(t, first).State != run.StateFailed {
		t.Fatalf("first run: %v", r)
	}
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return runtest.GoodOutcome(), nil
	})
	for i := 0; i < 2; i++ {
		id := p.Label(t, 7)
		if id == first {
			t.Fatalf("relabel %d: %+v, want a new run", i+1, id)
		}
		if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSucceeded {
			t.Fatalf("relabel %d: %v", i+1, r)
		}
	}
	if len(p.Repo.Publishes()) != 2 || p.Repo.Publishes()[0].Branch != p.Repo.Publishes()[1].Branch {
		t.Errorf("publishes %d, want 2 to one branch", len(p.Repo.Publishes()))
	}
}
