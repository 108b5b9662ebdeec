package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/internal/fault"
)

// This file holds the two small jobs beside the run: the periodic delivery
// cleanup (which also promotes stranded waiting runs, waiting.go) and the status comment
// rewrite for runs cancelled between attempts.

// cleanupWorker forgets deliveries older than the retention period (runs are kept: they are
// the service's history) and promotes waiting runs left without an active run (promoteStranded).
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
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	promoted, err := promoteStranded(ctx, w.pool, rc)
	if promoted > 0 {
		w.log.WarnContext(ctx, "promoted waiting runs whose active run ended without promoting them", "count", promoted, AttrJobID, job.ID)
	}
	return err
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

// statusWorker performs StatusArgs jobs.
type statusWorker struct {
	river.WorkerDefaults[StatusArgs]
	pool *pgxpool.Pool
	gh   GitHub
}

func (w *statusWorker) Timeout(*river.Job[StatusArgs]) time.Duration { return 2 * time.Minute }

func (w *statusWorker) Work(ctx context.Context, job *river.Job[StatusArgs]) error {
	r, err := store{pool: w.pool}.get(ctx, job.Args.RunID)
	if err != nil {
		return err
	}
	// Two kinds of runs end with nobody to rewrite their status comment: a run cancelled
	// while it waited for a retry (intake.go), and one the cleanup ended because its job
	// had ended without it (endDead).
	var note string
	switch r.State {
	case StateCancelled:
		note = "The label was removed or the issue was closed."
	case StateFailed:
		if !job.Args.Dead {
			return nil
		}
		note = deadRunNote
	default:
		return nil
	}
	if r.CommentID == 0 {
		return nil
	}
	repo, err := w.gh.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	body := renderStatus(statusView{RunID: r.ID, State: r.State, Note: note, ExtraRequests: r.ExtraRequests})
	if err := repo.EditComment(ctx, r.CommentID, body); err != nil {
		if fault.IsTransient(err) {
			return fmt.Errorf("editing status comment: %w", err)
		}
		return river.JobCancel(fmt.Errorf("editing status comment: %w", err))
	}
	return nil
}
