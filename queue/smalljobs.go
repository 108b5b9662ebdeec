package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// cleanupWorker forgets deliveries older than the retention period. Runs are
// kept: they are the service's history.
type cleanupWorker struct {
	river.WorkerDefaults[CleanupArgs]
	pool      *pgxpool.Pool
	retention time.Duration
	log       *slog.Logger
}

func (w *cleanupWorker) Timeout(*river.Job[CleanupArgs]) time.Duration { return 5 * time.Minute }

func (w *cleanupWorker) Work(ctx context.Context, job *river.Job[CleanupArgs]) error {
	n, err := DeleteOldDeliveries(ctx, w.pool, w.retention)
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "deleted old deliveries", "count", n, "retention", w.retention, AttrJobID, job.ID)
	return nil
}

// DeleteOldDeliveries deletes deliveries received more than retention ago
// and returns how many it deleted.
func DeleteOldDeliveries(ctx context.Context, pool *pgxpool.Pool, retention time.Duration) (int64, error) {
	tag, err := pool.Exec(ctx, `DELETE FROM deliveries WHERE received_at < now() - make_interval(secs => $1)`, retention.Seconds())
	if err != nil {
		return 0, fmt.Errorf("deleting old deliveries: %w", err)
	}
	return tag.RowsAffected(), nil
}
