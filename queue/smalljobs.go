package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
)

// This file holds the two small jobs beside the run: the periodic delivery
// cleanup (which also promotes stranded waiting runs, waiting.go) and the status comment
// rewrite for runs cancelled between attempts.

// cleanupWorker forgets deliveries older than the retention period (runs are kept: they are
// the service's history), ends the runs no job will run any more (endDead), promotes waiting
// runs left without an active run and wakes parked ones (promoteStranded), and queues again
// the writing of outboxes whose job ran out of tries (requeueOutboxes).
type cleanupWorker struct {
	river.WorkerDefaults[cleanupArgs]
	pool      *pgxpool.Pool
	retention time.Duration
	log       *slog.Logger
	label     string // Config.Label and Config.PublicURL, for the ends of abandoned runs (endDead)
	publicURL string
}

func (w *cleanupWorker) Timeout(*river.Job[cleanupArgs]) time.Duration { return 5 * time.Minute }

func (w *cleanupWorker) Work(ctx context.Context, job *river.Job[cleanupArgs]) error {
	n, err := deleteOldDeliveries(ctx, w.pool, w.retention)
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "deleted old deliveries", "count", n, "retention", w.retention, logging.JobID(job.ID))
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	promoted, err := promoteStranded(ctx, w.pool, rc, abandon{label: w.label, publicURL: w.publicURL})
	if promoted > 0 {
		w.log.WarnContext(ctx, "ended runs no job will run any more, promoted waiting runs, woke parked runs", "count", promoted, logging.JobID(job.ID))
	}
	if err != nil {
		return err
	}
	requeued, err := requeueOutboxes(ctx, w.pool, rc)
	if requeued > 0 {
		w.log.WarnContext(ctx, "queued again the writing of runs' ends that GitHub does not show yet", "count", requeued, logging.JobID(job.ID))
	}
	return err
}

// deleteOldDeliveries deletes deliveries received more than retention ago
// and returns how many it deleted.
func deleteOldDeliveries(ctx context.Context, pool *pgxpool.Pool, retention time.Duration) (int64, error) {
	tag, err := pool.Exec(ctx, `DELETE FROM deliveries WHERE received_at < now() - make_interval(secs => $1)`, retention.Seconds())
	if err != nil {
		return 0, fmt.Errorf("deleting old deliveries: %w", err)
	}
	return tag.RowsAffected(), nil
}

// statusWorker performs statusArgs jobs (run.Pipeline.RewriteStatus).
type statusWorker struct {
	river.WorkerDefaults[statusArgs]
	pool *pgxpool.Pool
	gh   run.GitHub
	log  *slog.Logger
}

func (w *statusWorker) Timeout(*river.Job[statusArgs]) time.Duration { return 2 * time.Minute }

func (w *statusWorker) Work(ctx context.Context, job *river.Job[statusArgs]) error {
	p := run.NewPipeline(run.Config{GitHub: w.gh, Store: store(w.pool)})
	var err error
	if job.Args.Outbox {
		_, err = p.WriteOutbox(ctx, job.Args.RunID, w.log.With(logging.RunID(job.Args.RunID), logging.JobID(job.ID)))
	} else {
		err = p.RewriteStatus(ctx, job.Args.RunID, job.Args.Dead)
	}
	var final *run.FinalError
	if errors.As(err, &final) {
		return river.JobCancel(final.Err)
	}
	return err
}
