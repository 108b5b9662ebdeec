package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// errGaveUp: nothing waited for the transaction of commitWhenBlocked.
var errGaveUp = errors.New("no transaction waited for the held rows")

// commitWhenBlocked runs before in a transaction of its own, then, once another backend waits
// for a lock that transaction holds, runs after and commits. The returned channel reports the
// outcome; calling giveUp rolls the transaction back if nothing has waited by then.
func (b *bundle) commitWhenBlocked(t *testing.T, before, after func(context.Context, pgx.Tx) error) (done <-chan error, giveUp func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := before(ctx, tx); err != nil {
		t.Fatal(err)
	}
	out, stop := make(chan error, 1), make(chan struct{})
	go func() {
		defer func() { _ = tx.Rollback(ctx) }()
		for {
			select {
			case <-stop:
				out <- errGaveUp
				return
			default:
			}
			var blocked int
			if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid).Scan(&blocked); err != nil {
				out <- err
				return
			}
			if blocked > 0 {
				break
			}
		}
		if err := after(ctx, tx); err != nil {
			out <- err
			return
		}
		out <- tx.Commit(ctx)
	}()
	return out, func() { close(stop) }
}

// endAndPromote is commitWhenBlocked's pair for a worker that ends run id (a refusal) and
// promotes the oldest run waiting on PR 77, as store.end does: the run's row is held from the
// start.
func (b *bundle) endAndPromote(t *testing.T, id int64) (<-chan error, func()) {
	t.Helper()
	return b.commitWhenBlocked(t,
		func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, id)
			return err
		},
		func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE runs SET state = 'skipped', finished_at = now(), exit_reason = 'permission' WHERE id = $1`, id); err != nil {
				return err
			}
			_, err := promoteWaiting(ctx, tx, b.client.runs, b.client.River(), 42, 77)
			return err
		})
}

// requireNothingLeft fails unless run id was cancelled, its job (if any) too, and PR 77 has
// no waiting, queued or running run.
func (b *bundle) requireNothingLeft(t *testing.T, id int64) {
	t.Helper()
	if got := b.row(t, id); got.State != run.StateCancelled {
		t.Errorf("run %d, which waited, is %s after the stop or cancel; want cancelled", id, got.State)
	}
	var jobID int64
	if err := b.pool.QueryRow(context.Background(), `SELECT coalesce(job_id, 0) FROM runs WHERE id = $1`, id).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	if jobID != 0 {
		if st := b.jobState(t, jobID); st != rivertype.JobStateCancelled {
			t.Errorf("the job of run %d is %s; want cancelled", id, st)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM runs WHERE repo_id = 42 AND issue = 77 AND state IN ('waiting', 'queued', 'running')`); n != 0 {
		t.Errorf("%d runs of the pull request are still waiting, queued or running", n)
	}
}

// TestStopOrCancelWhileTheActiveRunEnds: a stop request, a Cancel or an uninstall whose
// transaction waits for the active run's row while the worker ends that run and promotes the
// waiting one also takes the promoted run. Its statements' snapshot was taken before the
// promotion: the active run no longer matched and the promoted run was not waiting any more,
// so it escaped, and a request a writer had asked to stop ran and pushed.
func TestStopOrCancelWhileTheActiveRunEnds(t *testing.T) {
	t.Parallel()
	actions := []struct {
		name string
		do   func(t *testing.T, b *bundle)
	}{
		{"Stop", func(t *testing.T, b *bundle) {
			if r := b.workStop(t, "maintainer"); !r.completed() {
				t.Error(r)
			}
		}},
		{"Cancel", func(t *testing.T, b *bundle) {
			if _, err := b.client.Cancel(context.Background(), b.delivery("issues", "closed"), 42, 77, "closed"); err != nil {
				t.Error(err)
			}
		}},
		{"Uninstall", func(t *testing.T, b *bundle) {
			if _, err := b.client.CancelInstallation(context.Background(), b.delivery("installation", "deleted"), 5, "deleted"); err != nil {
				t.Error(err)
			}
		}},
	}
	for _, a := range actions {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.repo.Perms = map[string]string{"reader": "read"}
			first := b.acceptFollowUp(t, "reader", "@frognano do something")
			w := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
			if !w.Waiting {
				t.Fatalf("the second request: %+v", w)
			}
			done, giveUp := b.endAndPromote(t, first.RunID)
			a.do(t, b)
			giveUp()
			if err := <-done; err != nil {
				t.Fatalf("ending the active run: %v", err)
			}
			b.requireNothingLeft(t, w.RunID)
		})
	}
}

// TestCancelWhileTheCleanupPromotes: a Cancel whose transaction waits for a waiting run's row
// while the periodic cleanup promotes it (its active run ended without promoting it) takes the
// promoted run too.
func TestCancelWhileTheCleanupPromotes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.acceptFollowUp(t, "reader", "@frognano do something")
	w := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'failed' WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	done, giveUp := b.commitWhenBlocked(t,
		func(ctx context.Context, tx pgx.Tx) error {
			_, err := promoteWaiting(ctx, tx, b.client.runs, b.client.River(), 42, 77)
			return err
		},
		func(context.Context, pgx.Tx) error { return nil })
	_, err := b.client.Cancel(context.Background(), b.delivery("issues", "closed"), 42, 77, "closed")
	giveUp()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("promoting the stranded run: %v", err)
	}
	b.requireNothingLeft(t, w.RunID)
}

// TestWaitingRunBehindADeadRunIsPromoted: an active run whose River job ended without ending
// the run (River's rescuer discarded it after a crash on its last attempt, or the worker's own
// end failed before it cancelled its job) can never run again, and the runs waiting behind it
// would wait forever: the periodic cleanup ends it as failed and promotes the oldest waiting
// run. An active run whose job may still run is left alone.
func TestWaitingRunBehindADeadRunIsPromoted(t *testing.T) {
	t.Parallel()
	for _, jobState := range []string{"discarded", "cancelled", "completed", "deleted"} {
		t.Run(jobState, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t)
			first := b.acceptFollowUp(t, "reader", "@frognano do something")
			w := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
			if _, err := b.pool.Exec(ctx, `UPDATE runs SET state = 'running', started_at = now(), attempts = 3, comment_id = 77 WHERE id = $1`, first.RunID); err != nil {
				t.Fatal(err)
			}
			cw := &cleanupWorker{pool: b.pool, retention: DefaultDeliveryRetention, log: slog.New(slog.DiscardHandler)}
			// Its job is still available: the run may still be worked, and nothing changes.
			if r := workJob(t, b, cleanupArgs{}, 1, river.Worker[cleanupArgs](cw)); !r.completed() {
				t.Fatal(r)
			}
			if got := b.row(t, first.RunID).State; got != run.StateRunning || b.row(t, w.RunID).State != run.StateWaiting {
				t.Fatalf("the cleanup changed a run whose job may still run: %s, waiting run %s", got, b.row(t, w.RunID).State)
			}
			// Ended longer ago than the grace the cleanup gives a job's end (abandonGrace).
			sql := `UPDATE river_job SET state = $2, finalized_at = now() - interval '1 hour' WHERE id = $1`
			if jobState == "deleted" { // River's job cleaner deletes ended jobs after a while
				sql = `DELETE FROM river_job WHERE id = $1 AND $2 <> ''`
			}
			if _, err := b.pool.Exec(ctx, sql, first.JobID, jobState); err != nil {
				t.Fatal(err)
			}
			if r := workJob(t, b, cleanupArgs{}, 1, river.Worker[cleanupArgs](cw)); !r.completed() {
				t.Fatal(r)
			}
			if got := b.row(t, first.RunID); got.State != run.StateFailed || !strings.Contains(got.Error, "job") {
				t.Errorf("the dead run: %+v; want failed, saying its job ended", got)
			}
			b.requirePromoted(t, w.RunID)
			// Its status comment said it was running; the cleanup recorded its outbox and
			// queued the job that writes it.
			var queued int
			if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND (args->>'run_id')::bigint = $2 AND (args->>'outbox')::bool`,
				statusArgs{}.Kind(), first.RunID).Scan(&queued); err != nil || queued != 1 {
				t.Fatalf("%d outbox status jobs queued for the dead run (%v), want 1", queued, err)
			}
			sw := &statusWorker{pool: b.pool, gh: runtest.GitHubOf(b.repo), log: slog.New(slog.DiscardHandler)}
			if r := workJob(t, b, statusArgs{RunID: first.RunID, Outbox: true}, 1, river.Worker[statusArgs](sw)); !r.completed() {
				t.Fatal(r)
			}
			if e := b.repo.LastEdit(); e.ID != 77 || !strings.Contains(e.Body, "stopped working on run") || !strings.Contains(e.Body, "Ask again with a new comment to retry.") {
				t.Errorf("the dead run's status comment became %+v", e)
			}
			// A status job for a failed run the cleanup did not end leaves its comment alone.
			edits := len(b.repo.Edits())
			if r := workJob(t, b, statusArgs{RunID: first.RunID}, 1, river.Worker[statusArgs](sw)); !r.completed() || len(b.repo.Edits()) != edits {
				t.Errorf("a status job without Dead: %v, %d edits, want none more than %d", r, len(b.repo.Edits()), edits)
			}
		})
	}
}

// TestOneReaderCannotFillTheWaitingRuns: a reader who floods a pull request while their own
// request is the unchecked active run holds at most one waiting run (their later requests are
// counted on it), so a writer's request that comes after still waits its turn and reaches the
// model. Before, the reader's requests took every waiting place and the writer's was counted
// on the reader's run and never run.
func TestOneReaderCannotFillTheWaitingRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.Perms = map[string]string{"reader": "read"}
	first := b.acceptFollowUp(t, "reader", "@frognano 0")
	var mine int64
	elsewhere := 0
	for i := 1; i <= 2*run.MaxWaitingRuns; i++ {
		res := b.acceptFollowUp(t, "reader", fmt.Sprintf("@frognano %d", i))
		if mine == 0 {
			mine = res.RunID
		}
		if !res.Waiting || res.RunID != mine {
			elsewhere++
		}
	}
	if elsewhere != 0 {
		t.Errorf("%d of the reader's requests did not wait as, or were not counted on, the reader's one waiting run %d", elsewhere, mine)
	}
	if n := b.count(t, `SELECT extra_requests FROM runs WHERE id = $1`, mine); n != 2*run.MaxWaitingRuns-1 {
		t.Errorf("%d requests counted on the reader's waiting run, want %d", n, 2*run.MaxWaitingRuns-1)
	}
	writer := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	if !writer.Waiting || writer.RunID == mine {
		t.Errorf("the writer's request: %+v; want a waiting run of its own", writer)
	}
	for id, worked := first.RunID, 0; id != 0 && worked <= 2*run.MaxWaitingRuns; id, worked = b.activeRun(t), worked+1 {
		b.work(t, Accepted{RunID: id}, 1)
	}
	if got := b.row(t, writer.RunID).State; got != run.StateSucceeded || b.runner.Calls() != 1 {
		t.Fatalf("the writer's request (run %d): %s, model called %d times; want it run once", writer.RunID, got, b.runner.Calls())
	}
	said := strings.Join(b.repo.Comments(), "\n")
	if strings.Count(said, "No run was started") != 2 || !strings.Contains(said, fmt.Sprintf("%d more requests", 2*run.MaxWaitingRuns-1)) {
		t.Errorf("want two refusals, one saying the reader's %d other requests were not run:\n%s", 2*run.MaxWaitingRuns-1, said)
	}
}

// TestRequestsCountedOnAFoldedRunAreCounted: a person's second request, counted on their
// waiting run, is still counted when that run is folded into the promoted one.
func TestRequestsCountedOnAFoldedRunAreCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.Perms = map[string]string{"reader": "read"}
	reader := b.acceptFollowUp(t, "reader", "@frognano do something")
	w1 := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	w2 := b.acceptFollowUp(t, "other-maintainer", "@frognano rename y")
	again := b.acceptFollowUp(t, "Other-Maintainer", "@frognano and rename z")
	if !again.Waiting || again.RunID != w2.RunID {
		t.Fatalf("the second request of a person who waits: %+v; want it counted on their run %d", again, w2.RunID)
	}
	b.work(t, reader, 1)
	if r := b.work(t, w1, 1); !r.completed() || b.row(t, w2.RunID).ExitReason != "folded" {
		t.Fatalf("%v; run %d: %+v", r, w2.RunID, b.row(t, w2.RunID))
	}
	if n := b.count(t, `SELECT extra_requests FROM runs WHERE id = $1`, w1.RunID); n != 2 {
		t.Errorf("%d requests counted on the promoted run, want 2 (the folded run and the request counted on it)", n)
	}
}
