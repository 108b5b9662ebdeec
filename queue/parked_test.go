package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// parked reports whether run id is parked.
func (b *bundle) parked(t *testing.T, id int64) bool {
	t.Helper()
	return b.count(t, `SELECT count(*) FROM runs WHERE id = $1 AND state = 'queued' AND parked_at IS NOT NULL`, id) == 1
}

// park makes queued run id parked, as start leaves a run that found its installation busy.
func (b *bundle) park(t *testing.T, id int64) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET parked_at = now() WHERE id = $1 AND state = 'queued'`, id); err != nil {
		t.Fatal(err)
	}
}

// startByHand marks run id running, as start does.
func (b *bundle) startByHand(t *testing.T, id int64) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'running', parked_at = NULL,
		started_at = clock_timestamp(), attempts = attempts + 1 WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
}

// end ends running run id through run.Store.End, as the pipeline's ends do, with the bundle's
// limit in the context as the client's middleware puts it there.
func (b *bundle) end(t *testing.T, id int64) {
	t.Helper()
	rc := b.client.River()
	s := run.NewStore(b.pool, func(ctx context.Context, tx pgx.Tx, runs *run.Store, ended run.Ended) (int64, error) {
		return promoteAndWake(ctx, tx, runs, rc, b.worker.cfg.PerInstallationLimit, ended)
	})
	ended, err := s.End(context.Background(), id, run.StateSucceeded)
	if err != nil || !ended {
		t.Fatalf("ending run %d: %v (ended %v)", id, err, ended)
	}
}

// requireWoken fails unless run id is woken: queued, no longer parked, with a new job of its
// own available at once. It returns the job.
func (b *bundle) requireWoken(t *testing.T, id int64) *river.Job[RunArgs] {
	t.Helper()
	var jobID int64
	if err := b.pool.QueryRow(context.Background(), `SELECT coalesce(job_id, 0) FROM runs WHERE id = $1 AND state = 'queued' AND parked_at IS NULL`, id).Scan(&jobID); err != nil {
		t.Fatalf("run %d is not woken: %v", id, err)
	}
	row, err := b.client.River().JobGet(context.Background(), jobID)
	if err != nil {
		t.Fatal(err)
	}
	job, err := rowJob(row)
	if err != nil {
		t.Fatal(err)
	}
	if row.State != rivertype.JobStateAvailable || job.Args.RunID != id {
		t.Fatalf("the job of woken run %d is %s for run %d", id, row.State, job.Args.RunID)
	}
	return job
}

func rowJob(row *rivertype.JobRow) (*river.Job[RunArgs], error) {
	job := &river.Job[RunArgs]{JobRow: row}
	return job, json.Unmarshal(row.EncodedArgs, &job.Args)
}

// woken returns the runs of the bundle that are woken (queued, not parked, with a job of their
// own made after Accept's), in id order.
func (b *bundle) wokenRuns(t *testing.T, among []int64) []int64 {
	t.Helper()
	var out []int64
	for _, id := range among {
		if b.count(t, `SELECT count(*) FROM runs r JOIN river_job j ON j.id = r.job_id
			WHERE r.id = $1 AND r.state = 'queued' AND r.parked_at IS NULL AND j.state = 'available'`, id) == 1 {
			out = append(out, id)
		}
	}
	return out
}

// TestWakeIsFairBetweenPeopleAndRepositories: with one slot, the parked runs take turns:
// people first (one never served before one served; the one served longest ago next), a
// person's repositories next, the oldest last; not in the order they were parked, where one
// person's three runs would go first.
func TestWakeIsFairBetweenPeopleAndRepositories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PerInstallationLimit = 1
	ctx := context.Background()
	accept := func(repoID int64, issue int, who string) int64 {
		req := request(issue)
		req.RepoID, req.Repo, req.Labeler = repoID, fmt.Sprint("repo", repoID), who
		res, err := b.client.Accept(ctx, b.delivery("issues", "labeled"), req)
		if err != nil || res.RunID == 0 {
			t.Fatalf("Accept: %+v %v", res, err)
		}
		return res.RunID
	}
	first := accept(42, 1, "alice")
	b.startByHand(t, first)
	names := map[int64]string{}
	var parked []int64
	for _, r := range []struct {
		repo  int64
		issue int
		who   string
	}{{42, 2, "alice"}, {42, 3, "alice"}, {42, 4, "Alice"}, {43, 1, "bob"}, {42, 5, "carol"}, {43, 2, "bob"}} {
		id := accept(r.repo, r.issue, r.who)
		b.park(t, id)
		names[id] = fmt.Sprintf("%s/%d#%d", r.who, r.repo, r.issue)
		parked = append(parked, id)
	}
	var order []string
	running := first
	for range parked {
		b.end(t, running)
		woken := b.wokenRuns(t, parked)
		if len(woken) != 1 {
			t.Fatalf("one slot freed, %d runs woken: %v", len(woken), woken)
		}
		running = woken[0]
		order = append(order, names[running])
		b.startByHand(t, running)
	}
	want := []string{"bob/43#1", "carol/42#5", "alice/42#2", "bob/43#2", "alice/42#3", "Alice/42#4"}
	if !slices.Equal(order, want) {
		t.Errorf("woken in order %v, want %v", order, want)
	}
}

// TestParkedRunsAreWokenByTheCleanup: a parked run with a slot free and nothing to wake it (the
// process that freed the slot died between a retry's requeue and its wake), or behind a
// running run whose job ended without ending it (the worker died on its last attempt), is
// woken by the periodic cleanup; the dead run ends as failed. A parked run is not a dead one.
func TestParkedRunsAreWokenByTheCleanup(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"NothingRunning", "DeadRunHoldsTheSlot"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.worker.cfg.PerInstallationLimit = 1
			dead := b.accept(t, 1)
			p1, p2 := b.accept(t, 2), b.accept(t, 3)
			b.park(t, p1.RunID)
			b.park(t, p2.RunID)
			// The parked runs' jobs ended, as the worker ends a parked run's job.
			if _, err := b.pool.Exec(context.Background(), `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`,
				[]int64{p1.JobID, p2.JobID}); err != nil {
				t.Fatal(err)
			}
			if name == "DeadRunHoldsTheSlot" {
				b.startByHand(t, dead.RunID)
				// Discarded longer ago than the grace the cleanup gives a job's end (abandonGrace).
				if _, err := b.pool.Exec(context.Background(), `UPDATE river_job SET state = 'discarded', finalized_at = now() - interval '1 hour' WHERE id = $1`, dead.JobID); err != nil {
					t.Fatal(err)
				}
			} else if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'failed', finished_at = now() WHERE id = $1`, dead.RunID); err != nil {
				t.Fatal(err)
			}
			cw := &cleanupWorker{pool: b.pool, retention: DefaultDeliveryRetention, log: slog.New(slog.DiscardHandler)}
			if r := workJob(t, b, cleanupArgs{}, 1, river.Worker[cleanupArgs](cw)); !r.completed() {
				t.Fatal(r)
			}
			if got := b.row(t, dead.RunID).State; got != run.StateFailed {
				t.Errorf("the dead run is %s, want failed", got)
			}
			// One slot: the oldest parked run is woken, the other stays parked.
			b.requireWoken(t, p1.RunID)
			if !b.parked(t, p2.RunID) {
				t.Errorf("run %d was woken past the limit", p2.RunID)
			}
		})
	}
}

// TestWakeRetiresTheParkedRunsOldJob: a parked run whose job River still shows running (its
// worker died after parking it, before River recorded the job's end) gets a new job when
// woken; the old one is marked cancelled for River's rescuer, and a restart of its owner does
// not take it back: only the new job works the run, so the run never runs twice.
func TestWakeRetiresTheParkedRunsOldJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PerInstallationLimit = 1
	ctx := context.Background()
	busy, p := b.accept(t, 1), b.accept(t, 2)
	b.startByHand(t, busy.RunID)
	b.park(t, p.RunID)
	if _, err := b.pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 2, attempted_at = now(),
		attempted_by = ARRAY['w1/dead'] WHERE id = $1`, p.JobID); err != nil {
		t.Fatal(err)
	}
	b.end(t, busy.RunID)
	job := b.requireWoken(t, p.RunID)
	if job.ID == p.JobID || job.Args.Spent != 1 || job.MaxAttempts != MaxAttempts-1 {
		t.Errorf("woken job %d: spent %d, max attempts %d; want a new job carrying the 1 attempt spent", job.ID, job.Args.Spent, job.MaxAttempts)
	}
	if b.count(t, `SELECT count(*) FROM river_job WHERE id = $1 AND metadata ? 'cancel_attempted_at'`, p.JobID) != 1 {
		t.Error("the old job is not marked cancelled: River's rescuer would run it again")
	}
	c, err := NewClient(b.pool, Config{Workers: 1, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner, Owner: "w1", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.reclaim(ctx); err != nil || n != 0 {
		t.Errorf("reclaim took back %d jobs (%v), want none", n, err)
	}
}

// TestParkedRunsStartAsSlotsFree: with more runs of one installation than its limit and
// workers to spare, at most the limit run at once, counted from the agents and from the
// running rows; each end wakes the next parked run (with a new job, never a snoozed one, which
// would wait for its time to come), and every run runs once.
func TestParkedRunsStartAsSlotsFree(t *testing.T) {
	t.Parallel()
	const limit, runs = 2, 6
	b := setup(t)
	g := newGate(b.pool, runs)
	b.runner.Set(g.run)
	c := b.startClient(t, 4, limit)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobSnoozed, river.EventKindJobFailed)
	defer unsubscribe()
	for i := 1; i <= runs; i++ {
		b.accept(t, i)
	}
	for i := 0; i < limit; i++ {
		g.awaitEntry(t)
	}
	// The others park as the workers take them: their jobs end.
	b.waitFor(t, events, `SELECT count(*) FROM runs WHERE parked_at IS NOT NULL`, runs-limit)
	for started := limit; started < runs; started++ {
		g.release <- struct{}{}
		g.awaitEntry(t)
	}
	for i := 0; i < limit; i++ {
		g.release <- struct{}{}
	}
	b.waitFor(t, events, `SELECT count(*) FROM runs WHERE state = 'succeeded'`, runs)

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.countErr != nil {
		t.Fatal(g.countErr)
	}
	if g.maxInRun != limit || g.maxRunningByInstall[5] > limit {
		t.Errorf("%d agents and %d running runs at once, want %d", g.maxInRun, g.maxRunningByInstall[5], limit)
	}
	if n := b.count(t, `SELECT count(*) FROM runs WHERE attempts <> 1`); n != 0 {
		t.Errorf("%d runs ran other than once", n)
	}
	// Nothing is left to run again (River may still be recording the last jobs' ends).
	if n := b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state IN ('available', 'scheduled', 'retryable')`); n != 0 {
		t.Errorf("%d run jobs left to run", n)
	}
}

// waitFor waits until sql counts n, looking again at each event River sends.
func (b *bundle) waitFor(t *testing.T, events <-chan *river.Event, sql string, n int) {
	t.Helper()
	for b.count(t, sql) < n {
		select {
		case <-events:
		case <-time.After(60 * time.Second):
			t.Fatalf("%q did not reach %d", sql, n)
		}
	}
}
