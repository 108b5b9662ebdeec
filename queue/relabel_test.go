package queue

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
)

func checkedOutcome() *run.Outcome {
	o := goodOutcome()
	o.Check = &githubapp.CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "success",
		Title: "All 3 test(s) pass with the patch; 1 fixed.", Summary: "| before | after |", Text: "",
		ExternalID: "run-1", StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CompletedAt: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC)}
	return o
}

// TestWorkerReportsTheCheckRunEvenOnARetry: the check run goes to Publish, and a retry after
// a failed publish (the agent not run again) reports the same one, kept in the database.
func TestWorkerReportsTheCheckRunEvenOnARetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return checkedOutcome(), nil
	})
	res := b.accept(t, 7)
	b.repo.failNext("Publish", flaky("pushing"))
	if r := b.work(t, res, 1); !r.retried() {
		t.Fatalf("attempt 1 = %v, want retryable", r)
	}
	if r := b.work(t, res, 2); !r.completed() {
		t.Fatalf("attempt 2 = %v", r)
	}
	want := checkedOutcome().Check
	for i, p := range b.repo.publishes {
		if p.Check == nil || !reflect.DeepEqual(*p.Check, *want) {
			t.Errorf("publish %d: check run %+v, want %+v", i+1, p.Check, want)
		}
	}
}

// TestWorkerFailedRunRemovesTheLabel: a run that ends without a pull request, or fails for good,
// takes the label off the issue, so that adding it again retries; a run that succeeded leaves it.
func TestWorkerFailedRunRemovesTheLabel(t *testing.T) {
	t.Parallel()
	t.Run("NoPatch", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			o := goodOutcome()
			o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
			return o, nil
		})
		if r := b.work(t, b.accept(t, 7), 1); !r.completed() {
			t.Fatal(r)
		}
		if got := b.repo.removedLabels; len(got) != 1 || got[0] != "frognano" {
			t.Errorf("removed labels %v, want [frognano]", got)
		}
	})
	t.Run("InfrastructureFailure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.repo.failNext("Clone", fault.Permanent(errors.New("repository is gone")))
		if r := b.work(t, b.accept(t, 7), 1); !r.cancelled() {
			t.Fatal(r)
		}
		if got := b.repo.removedLabels; len(got) != 1 {
			t.Errorf("removed labels %v, want [frognano]", got)
		}
	})
	t.Run("Succeeded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if r := b.work(t, b.accept(t, 7), 1); !r.completed() {
			t.Fatal(r)
		}
		if got := b.repo.removedLabels; len(got) != 0 {
			t.Errorf("removed labels %v after a success", got)
		}
	})
}

// TestWorkerRelabelAfterTheRunEndedUpdatesTheSamePR: labelling again after a run ended (here
// a failed one, then a succeeded one) starts a new run, which publishes to the same branch,
// so the same pull request is updated.
func TestWorkerRelabelAfterTheRunEndedUpdatesTheSamePR(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := goodOutcome()
		o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
		return o, nil
	})
	first := b.accept(t, 7)
	if r := b.work(t, first, 1); !r.completed() || b.row(t, first.RunID).State != run.StateFailed {
		t.Fatalf("first run: %v", r)
	}
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return goodOutcome(), nil
	})
	for i := 0; i < 2; i++ {
		res := b.accept(t, 7)
		if res.AlreadyActive || res.RunID == first.RunID {
			t.Fatalf("relabel %d: %+v, want a new run", i+1, res)
		}
		if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded {
			t.Fatalf("relabel %d: %v", i+1, r)
		}
	}
	if len(b.repo.publishes) != 2 || b.repo.publishes[0].Branch != b.repo.publishes[1].Branch {
		t.Errorf("publishes %d, want 2 to one branch", len(b.repo.publishes))
	}
}
