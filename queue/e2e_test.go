package queue

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// startWorkers starts a working client on b's schema with b's fakes.
func (b *bundle) startWorkers(t testing.TB, softStop time.Duration) *Client {
	t.Helper()
	c, err := NewClient(b.pool, Config{
		Workers: 2, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner, StatusEditInterval: -1,
		SoftStopTimeout: softStop, FetchPollInterval: 50 * time.Millisecond, WorkDir: t.TempDir(),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
	return c
}

// waitJob waits for a finished-job event for jobID.
func waitJob(t testing.TB, events <-chan *river.Event, jobID int64) *river.Event {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Job.ID == jobID {
				return ev
			}
		case <-timeout.C:
			t.Fatalf("job %d did not finish within 30s", jobID)
			return nil
		}
	}
}

func TestEndToEndRunCompletes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.startWorkers(t, time.Second)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()

	res := b.accept(t, 7)
	ev := waitJob(t, events, res.JobID)
	if ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("job event = %s, want completed", ev.Kind)
	}
	if r := b.row(t, res.RunID); r.State != run.StateSucceeded || len(b.repo.Publishes()) != 1 {
		t.Errorf("run = %+v, publishes %d", r, len(b.repo.Publishes()))
	}
}

func TestEndToEndUnlabelCancelsRunningJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	started := make(chan struct{})
	causes := make(chan error, 1)
	b.runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	c := b.startWorkers(t, time.Second)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()

	res := b.accept(t, 7)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent never started")
	}
	if _, err := c.Cancel(context.Background(), b.delivery("issues", "unlabeled"), 42, 7, "label removed"); err != nil {
		t.Fatal(err)
	}
	ev := waitJob(t, events, res.JobID)
	if ev.Kind != river.EventKindJobCancelled || ev.Job.State != rivertype.JobStateCancelled {
		t.Errorf("job event %s state %s, want cancelled", ev.Kind, ev.Job.State)
	}
	if cause := <-causes; !errors.Is(cause, rivertype.ErrJobCancelledRemotely) {
		t.Errorf("runner context cause = %v, want River's remote cancel", cause)
	}
	if r := b.row(t, res.RunID); r.State != run.StateCancelled {
		t.Errorf("run state = %s", r.State)
	}
	if body := b.repo.LastEdit().Body; !strings.Contains(body, "was cancelled") {
		t.Errorf("final comment = %q", body)
	}
	if len(b.repo.Publishes()) != 0 {
		t.Error("published a cancelled run")
	}
}

func TestStopInterruptsRunAndANewWorkerResumesIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	started := make(chan struct{}, 1)
	b.runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		started <- struct{}{}
		<-ctx.Done() // an agent that outlives the soft stop
		return nil, ctx.Err()
	})
	// The soft stop always runs out (the agent outlives it); the hard stop that follows has as
	// long again for the attempt to put the run back to queued, which takes several database
	// writes: 200 ms was too short on a loaded test host (seen with run's tests running beside).
	first, err := NewClient(b.pool, Config{Workers: 1, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner,
		StatusEditInterval: -1, SoftStopTimeout: 2 * time.Second, WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := b.accept(t, 7)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := first.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if r := b.row(t, res.RunID); r.State != run.StateQueued {
		t.Fatalf("after stop the run is %s, want queued", r.State)
	}
	job, err := first.River().JobGet(ctx, res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != rivertype.JobStateAvailable || job.Attempt != 0 {
		t.Errorf("after stop the job is %s at attempt %d, want available without a spent attempt", job.State, job.Attempt)
	}

	b.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return runtest.GoodOutcome(), nil
	})
	second := b.startWorkers(t, time.Second)
	events, unsubscribe := second.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()
	if _, err := second.River().JobRetry(ctx, res.JobID); err != nil { // make it due now, not at its next poll
		t.Fatal(err)
	}
	if ev := waitJob(t, events, res.JobID); ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("resumed job = %s", ev.Kind)
	}
	if r := b.row(t, res.RunID); r.State != run.StateSucceeded || len(b.repo.Publishes()) != 1 || len(b.repo.Comments()) != 1 {
		t.Errorf("resumed run = %+v, publishes %d, comments %d", r, len(b.repo.Publishes()), len(b.repo.Comments()))
	}
}

// BenchmarkJobPickup measures how long a committed run job waits before a
// worker starts it (River's queue wait), through LISTEN/NOTIFY.
func BenchmarkJobPickup(b *testing.B) {
	bb := setup(b)
	c := bb.startWorkers(b, time.Second)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()
	bb.repo.Perm = "read" // the shortest worker path: one comment, done

	waits := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.Accept(context.Background(), bb.delivery("issues", "labeled"), request(i+1))
		if err != nil {
			b.Fatal(err)
		}
		ev := waitJob(b, events, res.JobID)
		waits = append(waits, ev.JobStats.QueueWaitDuration)
	}
	b.StopTimer()
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "p50_pickup_ms")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "p99_pickup_ms")
}

func TestCancelBetweenAttemptsRewritesTheStatusComment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.repo.FailNext("Clone", runtest.Flaky("cloning"))
	if r := b.work(t, res, 1); !r.retried() {
		t.Fatalf("attempt 1 = %v, want retryable", r)
	}
	commentID := b.row(t, res.RunID).CommentID
	if !strings.Contains(b.repo.LastEdit().Body, "retrying") {
		t.Fatalf("status after a transient failure = %q", b.repo.LastEdit().Body)
	}
	// Attempt 1 ran outside River: leave the job as River would after a transient failure,
	// waiting for its retry, so that the workers started below cannot take it first.
	if _, err := b.pool.Exec(context.Background(), `UPDATE river_job SET state = 'retryable', attempt = 1,
		scheduled_at = now() + interval '1 hour' WHERE id = $1`, res.JobID); err != nil {
		t.Fatal(err)
	}

	c := b.startWorkers(t, time.Second)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()
	if _, err := c.Cancel(context.Background(), b.delivery("issues", "closed"), 42, 7, "issue closed"); err != nil {
		t.Fatal(err)
	}
	var statusJob int64
	if err := b.pool.QueryRow(context.Background(), `SELECT id FROM river_job WHERE kind = 'frognano_status'`).Scan(&statusJob); err != nil {
		t.Fatalf("no status job queued: %v", err)
	}
	if ev := waitJob(t, events, statusJob); ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("status job = %s", ev.Kind)
	}
	last := b.repo.LastEdit()
	if last.ID != commentID || !strings.Contains(last.Body, "was cancelled") {
		t.Errorf("last edit = %+v, want comment %d saying cancelled", last, commentID)
	}
	if b.runner.Calls() != 0 || len(b.repo.Comments()) != 1 {
		t.Errorf("runner %d calls, %d comments", b.runner.Calls(), len(b.repo.Comments()))
	}
}
