package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// The run package's tests make their attempts as this worker does, as many as it makes.
func TestWorkerMakesTheAttemptsRunTestsAssume(t *testing.T) {
	t.Parallel()
	if MaxAttempts != runtest.MaxAttempts || DefaultJobTimeout != runtest.DefaultJobTimeout || DefaultPerInstallationLimit != 2 {
		t.Errorf("MaxAttempts %d, DefaultJobTimeout %s, DefaultPerInstallationLimit %d: run/runtest assumes %d, %s and 2",
			MaxAttempts, DefaultJobTimeout, DefaultPerInstallationLimit, runtest.MaxAttempts, runtest.DefaultJobTimeout)
	}
}

// TestWorkerErrorClassification: what an attempt returns (run.Pipeline.Work; run's
// TestErrorClassification proves which) becomes River's outcome: a transient failure with
// attempts left is retried, a final one cancels the job, whatever the attempt.
func TestWorkerErrorClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		method    string
		err       error
		attempt   int
		wantRetry bool
		wantState string
	}{
		{"TransientPermission", "Permission", runtest.Flaky("permission"), 1, true, run.StateQueued},
		{"TransientOnLastAttempt", "Permission", runtest.Flaky("permission"), MaxAttempts, false, run.StateFailed},
		{"PermanentIssue", "Issue", errors.New("404 Not Found"), 1, false, run.StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			res := b.accept(t, 7)
			b.repo.FailNext(tt.method, tt.err)
			r := b.work(t, res, tt.attempt)
			if r.completed() {
				t.Fatal("the attempt succeeded, want an error")
			}
			// Only River's retry counts: a failure that is not retried cancels the job.
			if r.retried() != tt.wantRetry || r.retried() == r.cancelled() {
				t.Errorf("attempt = %v: retried %v, want %v", r, r.retried(), tt.wantRetry)
			}
			if got := b.row(t, res.RunID).State; got != tt.wantState {
				t.Errorf("state = %s, want %s", got, tt.wantState)
			}
		})
	}
}

// TestWorkerParksWhenInstallationIsBusy: a run whose installation is at its limit is parked
// (queued, parked_at set) and its job ends, spending no attempt; the end of the running run
// wakes it with a new job, available at once, and it then runs.
func TestWorkerParksWhenInstallationIsBusy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PerInstallationLimit = 1
	busy := b.accept(t, 1)
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'running', started_at = now() WHERE id = $1`, busy.RunID); err != nil {
		t.Fatal(err)
	}
	res := b.accept(t, 2)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("attempt = %v, want the job ended", r)
	}
	if got := b.row(t, res.RunID).State; got != run.StateQueued || !b.parked(t, res.RunID) {
		t.Errorf("state = %s, parked %v; want queued and parked", got, b.parked(t, res.RunID))
	}
	if b.runner.Calls() != 0 {
		t.Error("ran while the installation was at its limit")
	}
	b.end(t, busy.RunID)
	job := b.requireWoken(t, res.RunID)
	if job.MaxAttempts != MaxAttempts || job.Args.Spent != 0 {
		t.Errorf("woken job: %d attempts, %d spent; want %d and none", job.MaxAttempts, job.Args.Spent, MaxAttempts)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded || b.row(t, res.RunID).Attempts != 1 {
		t.Fatalf("the woken run: %v %+v", r, b.row(t, res.RunID))
	}
}

// TestWorkerTimeoutFailsTheRunAsMaxTime: River ends the attempt at the worker's
// Timeout (the job budget); the run fails as max_time and the job is cancelled, not retried.
func TestWorkerTimeoutFailsTheRunAsMaxTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.JobTimeout = 300 * time.Millisecond
	res := b.accept(t, 7)
	b.runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("agent run: %w", ctx.Err())
	})
	if r := b.work(t, res, 1); !r.cancelled() {
		t.Fatalf("attempt = %v, want the job cancelled", r)
	}
	if r := b.row(t, res.RunID); r.State != run.StateFailed || r.ExitReason != "max_time" {
		t.Errorf("run = %+v, want failed as max_time", r)
	}
	if body := b.repo.LastEdit().Body; !strings.Contains(body, "time budget of 300ms") {
		t.Errorf("final comment = %q, want the time budget named", body)
	}
	if len(b.repo.Publishes()) != 0 {
		t.Error("published after the time budget ran out")
	}
}
