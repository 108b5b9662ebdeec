package run_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestMayStart: who may start a run (or stop one) is whoever may write: admin, maintain or
// write, as GitHub names them; anything else, or nothing, may not.
func TestMayStart(t *testing.T) {
	t.Parallel()
	for perm, want := range map[string]bool{"admin": true, "maintain": true, "write": true,
		"triage": false, "read": false, "none": false, "": false, "Write": false, "owner": false} {
		if got := run.MayStart(perm); got != want {
			t.Errorf("MayStart(%q) = %v, want %v", perm, got, want)
		}
	}
}

// TestBusyInstallationParksTheRun: with its installation at PerInstallationLimit running runs,
// an attempt parks the run (queued, parked) and returns ErrBusy, without starting it or
// spending an attempt; once a slot is free, the run's next attempt runs it.
func TestBusyInstallationParksTheRun(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.PerInstallationLimit = 1
	busy := p.Label(t, 1)
	setState := func(id int64, state string) {
		t.Helper()
		if _, err := p.Pool.Exec(context.Background(), `UPDATE runs SET state = $2, started_at = now() WHERE id = $1`, id, state); err != nil {
			t.Fatal(err)
		}
	}
	setState(busy, run.StateRunning)
	id := p.Label(t, 2)
	if a := p.Work(t, id, 1); !a.Busy() {
		t.Fatalf("%v, want ErrBusy", a)
	}
	if r := p.Row(t, id); r.State != run.StateQueued || !r.Parked || r.Attempts != 0 {
		t.Errorf("run %+v, want queued and parked, no attempt spent", r)
	}
	if p.Runner.Calls() != 0 || len(p.Repo.Comments()) != 0 {
		t.Errorf("the agent ran %d times and %d comments were posted while the installation was at its limit", p.Runner.Calls(), len(p.Repo.Comments()))
	}
	setState(busy, run.StateSucceeded)
	if a := p.Work(t, id, 1); !a.Completed() {
		t.Fatalf("the woken run: %v", a)
	}
	if r := p.RequireState(t, id, run.StateSucceeded); r.Parked || r.Attempts != 1 {
		t.Errorf("the woken run %+v, want no longer parked, after one attempt", r)
	}
}

// TestCancelledRemotelyEndsTheRunCancelled: an attempt whose context ends with
// Config.RemoteCancel (the queue cancelled the job) ends the run as cancelled, final, with its
// status comment saying so and nothing published.
func TestCancelledRemotelyEndsTheRunCancelled(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p.Runner.Set(func(ctx context.Context, _ run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
		cancel(runtest.ErrRemoteCancel)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if a := p.WorkContext(ctx, t, id, 1); !a.Final() {
		t.Fatalf("%v, want final", a)
	}
	p.RequireState(t, id, run.StateCancelled)
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "was cancelled") {
		t.Errorf("final comment = %q, want it to say the run was cancelled", body)
	}
	if len(p.Repo.Publishes()) != 0 {
		t.Error("published a cancelled run")
	}
}

// TestShutdownRequeuesTheRun: an attempt whose context ends otherwise (the worker shuts down)
// puts the run back to queued, says it will resume, and returns an error that wraps the
// context's, for the queue to make the job available again without spending an attempt.
func TestShutdownRequeuesTheRun(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.Runner.Set(func(ctx context.Context, _ run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
		cancel()
		return nil, ctx.Err()
	})
	a := p.WorkContext(ctx, t, id, 1)
	if !a.Retried() || !errors.Is(a.Err, context.Canceled) {
		t.Fatalf("%v, want an error for the queue's retry that wraps context.Canceled", a)
	}
	p.RequireState(t, id, run.StateQueued)
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "The worker restarted; this run will resume.") {
		t.Errorf("status comment = %q, want it to say the run resumes", body)
	}
}
