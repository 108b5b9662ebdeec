package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// This file is the queue's side of a run's outbox (run/outbox.go): what a run's end must
// still write to GitHub, recorded with its outcome. River's job table makes it a
// transactional outbox: the transaction that records the end inserts a status job that
// writes it (deliverOutbox), so a process that dies after the commit, whatever instant,
// leaves a job that any live process works. The worker that ended the run writes it at once
// itself; the job, due outboxGrace later, finds it written and does nothing. A job that runs
// out of tries (GitHub failing all along) leaves the outbox in the run's row, where the
// periodic cleanup finds it and queues a new one (requeueOutboxes). The queue's own ends of a
// run record an outbox and queue its job the same way: Cancel (intake.go) and the cleanup's
// end of a run no job will run any more (endDead, waiting.go).

// outboxGrace is how long after a run's end its status job is due: long enough for the worker
// that ended the run to have written it (GitHub's writes are paced per installation), short
// enough that the status comment of a run whose worker died is right soon after.
const outboxGrace = time.Minute

// deliverOutbox is the run.Deliver of a job's context: it inserts, in tx, the status job that
// writes run runID's outbox, with the River client that works the job. Without a client (a
// job worked outside River) the cleanup's requeueOutboxes queues it later.
func deliverOutbox(ctx context.Context, tx pgx.Tx, runID int64) error {
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return nil
	}
	if _, err := rc.InsertTx(ctx, tx, statusArgs{RunID: runID, Outbox: true}, &river.InsertOpts{ScheduledAt: time.Now().Add(outboxGrace)}); err != nil {
		return fmt.Errorf("queueing the writing of run %d's end to GitHub: %w", runID, err)
	}
	return nil
}

// requeueOutboxes queues a status job for each run whose outbox is still there outboxGrace
// after its end and that no status job will write any more (its own ran out of tries, or was
// never inserted), and returns how many it queued.
func requeueOutboxes(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx]) (int, error) {
	rows, err := pool.Query(ctx, `SELECT r.id FROM runs r
		WHERE r.outbox IS NOT NULL AND r.finished_at < now() - make_interval(secs => $1)
		  AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.kind = $2 AND (j.args->>'run_id')::bigint = r.id
			AND j.state NOT IN ('completed', 'cancelled', 'discarded'))
		ORDER BY r.id`, outboxGrace.Seconds(), statusArgs{}.Kind())
	if err != nil {
		return 0, fmt.Errorf("looking for runs whose end GitHub does not show yet: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("looking for runs whose end GitHub does not show yet: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, id := range ids {
			if _, err := rc.InsertTx(ctx, tx, statusArgs{RunID: id, Outbox: true}, nil); err != nil {
				return fmt.Errorf("queueing the writing of run %d's end to GitHub: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(ids), nil
}
