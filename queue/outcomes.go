package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/outcome"
)

// The queue's side of following pull requests to their end (package outcome): the intake of
// pull_request events, the job that measures a merged pull request, and the periodic
// reconciliation round.

// PullEventResult says what PullRequestEvent did.
type PullEventResult struct {
	// Ignored: frognano follows no such pull request; nothing was stored, not even the delivery.
	Ignored bool
	// Duplicate: this delivery was seen before; nothing was changed.
	Duplicate bool
	outcome.Applied
}

// PullRequestEvent records a pull_request event on the pull request it names when frognano
// follows it, in ONE transaction with its delivery (and, for a merge, the job that measures
// it): it has committed when it returns. A pull request frognano does not follow stores
// nothing (Ignored).
func (c *Client) PullRequestEvent(ctx context.Context, d Delivery, ev outcome.Event) (PullEventResult, error) {
	var res PullEventResult
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		res = PullEventResult{}
		found, err := c.outcomes.Follows(ctx, tx, ev.RepoID, ev.Number)
		if err != nil || !found {
			res.Ignored = !found
			return err
		}
		fresh, err := recordDelivery(ctx, tx, d, "recorded")
		if err != nil || !fresh {
			res.Duplicate = !fresh
			return err
		}
		if res.Applied, err = c.outcomes.ApplyEvent(ctx, tx, ev); err != nil {
			return err
		}
		if res.Measure {
			if _, err := c.river.InsertTx(ctx, tx, measureArgs{RepoID: ev.RepoID, Number: ev.Number}, nil); err != nil {
				return fmt.Errorf("queueing the measure of the merged pull request: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return PullEventResult{}, fmt.Errorf("recording a pull_request event: %w", err)
	}
	c.outcomes.Count(res.Applied) // committed: the end is counted now, once
	return res, nil
}

// measureArgs is the job that measures what people changed of a merged pull request
// (outcome.Reconciler.Measure), queued with the merge's event.
type measureArgs struct {
	RepoID int64 `json:"repo_id"`
	Number int   `json:"number"`
}

func (measureArgs) Kind() string { return "frognano_outcome_measure" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (measureArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: MaxAttempts}
}

type measureWorker struct {
	river.WorkerDefaults[measureArgs]
	rec *outcome.Reconciler
}

func (w *measureWorker) Timeout(*river.Job[measureArgs]) time.Duration { return 10 * time.Minute }

func (w *measureWorker) Work(ctx context.Context, job *river.Job[measureArgs]) error {
	return w.rec.Measure(ctx, job.Args.RepoID, job.Args.Number)
}

// syncArgs is the periodic reconciliation round (outcome.Reconciler.Round).
type syncArgs struct{}

func (syncArgs) Kind() string { return "frognano_outcomes_sync" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (syncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: 1}
}

type syncWorker struct {
	river.WorkerDefaults[syncArgs]
	rec *outcome.Reconciler
	log *slog.Logger
}

func (w *syncWorker) Timeout(*river.Job[syncArgs]) time.Duration { return 30 * time.Minute }

func (w *syncWorker) Work(ctx context.Context, job *river.Job[syncArgs]) error {
	rep, err := w.rec.Round(ctx)
	w.log.InfoContext(ctx, "reconciled pull requests with GitHub", "asked", rep.Asked, "calls", rep.Calls,
		"changes", len(rep.Changes), "stopped", rep.Stopped, logging.JobID(job.ID))
	return err
}

// addOutcomeWorkers registers the measure and the periodic round when cfg has a Reconciler.
func addOutcomeWorkers(workers *river.Workers, rc *river.Config, cfg Config) error {
	if cfg.Reconciler == nil {
		return nil
	}
	if err := errors.Join(
		river.AddWorkerSafely(workers, &measureWorker{rec: cfg.Reconciler}),
		river.AddWorkerSafely(workers, &syncWorker{rec: cfg.Reconciler, log: cfg.Logger}),
	); err != nil {
		return fmt.Errorf("registering the outcome workers: %w", err)
	}
	if cfg.OutcomesInterval > 0 {
		rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(cfg.OutcomesInterval),
			func() (river.JobArgs, *river.InsertOpts) { return syncArgs{}, nil },
			&river.PeriodicJobOpts{ID: "frognano_outcomes_sync"}))
	}
	return nil
}
