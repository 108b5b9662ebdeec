package queue

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestStopWaitsForTheCancelledRunsToCleanUp: a cancelled run whose clean-up takes longer than
// the soft stop (removing sandboxes on a busy host takes seconds) still ends before Stop
// returns: its run is queued again and its status comment says so, all with the pool still
// open. Stop used to give the cancelled jobs SoftStopTimeout again, then return while they
// worked, and the service closed the pool under them: the run stayed running, as after a crash.
func TestStopWaitsForTheCancelledRunsToCleanUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const softStop = 100 * time.Millisecond
	started := make(chan struct{}, 1)
	var cleanedUp atomic.Bool
	b.runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		started <- struct{}{}
		<-ctx.Done()
		// The clean-up of a busy host: ten soft stops long (the runner removes its sandboxes
		// before it returns).
		time.Sleep(10 * softStop)
		cleanedUp.Store(true)
		return nil, ctx.Err()
	})
	c, err := NewClient(b.pool, Config{Workers: 1, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner,
		StatusEditInterval: -1, SoftStopTimeout: softStop, WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := b.accept(t, 7)
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatal("the agent never started")
	}

	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !cleanedUp.Load() {
		t.Fatal("Stop returned before the cancelled run had cleaned up")
	}
	if r := b.row(t, res.RunID); r.State != run.StateQueued {
		t.Errorf("after Stop the run is %s, want queued", r.State)
	}
	if body := b.repo.LastEdit().Body; !strings.Contains(body, "will resume") {
		t.Errorf("status comment after Stop = %q, want it to say the run will resume", body)
	}
	job, err := c.River().JobGet(context.Background(), res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != rivertype.JobStateAvailable || job.Attempt != 0 {
		t.Errorf("after Stop the job is %s at attempt %d, want available without a spent attempt", job.State, job.Attempt)
	}
}
