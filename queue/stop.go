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
	"github.com/riverqueue/river/rivertype"
)

// StopArgs is a reviewer's `@APP stop` on a pull request: the job checks that they may write,
// then cancels the pull request's active follow-up run.
type StopArgs struct {
	InstallationID int64  `json:"installation_id"`
	RepoID         int64  `json:"repo_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	PR             int    `json:"pr"`
	Requester      string `json:"requester"`
}

// Kind implements river.JobArgs.
func (StopArgs) Kind() string { return "frognano_stop" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (StopArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: MaxAttempts}
}

// RequestStop records the delivery and queues the stop request in ONE transaction; the permission
// check needs GitHub, so it is the job's. It reports whether the delivery was seen before.
func (c *Client) RequestStop(ctx context.Context, d Delivery, req StopArgs) (duplicate bool, err error) {
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		fresh, err := recordDelivery(ctx, tx, d, "stop_requested")
		if err != nil || !fresh {
			duplicate = !fresh
			return err
		}
		if _, err := c.river.InsertTx(ctx, tx, req, nil); err != nil {
			return fmt.Errorf("queueing the stop request: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("accepting stop request: %w", err)
	}
	return duplicate, nil
}

// stopWorker performs StopArgs jobs.
type stopWorker struct {
	river.WorkerDefaults[StopArgs]
	pool *pgxpool.Pool
	gh   GitHub
	log  *slog.Logger
}

func (w *stopWorker) Timeout(*river.Job[StopArgs]) time.Duration { return 2 * time.Minute }

func (w *stopWorker) Work(ctx context.Context, job *river.Job[StopArgs]) error {
	a := job.Args
	repo, err := w.gh.ForRepo(ctx, a.InstallationID, a.Owner, a.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", a.Owner, a.Repo, err)
	}
	perm, err := repo.Permission(ctx, a.Requester)
	if err != nil {
		return fmt.Errorf("checking permission of %s: %w", a.Requester, err)
	}
	if !allowedPermissions[perm] {
		w.log.InfoContext(ctx, "stop request from someone who may not write; ignored", "requester", a.Requester, "permission", perm)
		return nil
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE runs SET state = 'cancelled', finished_at = now(), exit_reason = 'cancelled',
				error = 'stopped by ' || $3
			WHERE repo_id = $1 AND issue = $2 AND kind = 'followup' AND state IN ('queued', 'running')
			RETURNING coalesce(job_id, 0)`, a.RepoID, a.PR, a.Requester)
		if err != nil {
			return fmt.Errorf("stopping follow-ups: %w", err)
		}
		jobs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("stopping follow-ups: %w", err)
		}
		for _, id := range jobs {
			if id == 0 {
				continue
			}
			if _, err := client.JobCancelTx(ctx, tx, id); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return fmt.Errorf("cancelling job %d: %w", id, err)
			}
		}
		w.log.InfoContext(ctx, "follow-ups stopped", "requester", a.Requester, "jobs", jobs)
		return nil
	})
}
