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

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
)

// StopArgs is a reviewer's `@APP stop` on a pull request: the job checks that they may write,
// then cancels the pull request's active follow-up run. With OnIssue it is a writer's `@APP
// stop` on an issue (PR is the issue's number), and it cancels the issue's run.
type StopArgs struct {
	InstallationID int64  `json:"installation_id"`
	RepoID         int64  `json:"repo_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	PR             int    `json:"pr"`
	Requester      string `json:"requester"`
	OnIssue        bool   `json:"on_issue,omitempty"`
}

// Kind implements river.JobArgs.
func (StopArgs) Kind() string { return "frognano_stop" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (StopArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: MaxAttempts}
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
	gh   run.GitHub
	log  *slog.Logger
}

func (w *stopWorker) Timeout(*river.Job[StopArgs]) time.Duration { return 2 * time.Minute }

// Work cancels the pull request's queued and running follow-ups (a reviewer's and CI's) and
// the requests waiting for them, and answers the stop request with a reply. A running
// follow-up's worker writes its own reply's final text when River cancels its context; one that
// waited (queued, or between attempts) has nobody to, so its reply is edited here; a waiting
// request has no reply yet. A retry of this job (the reply failed) finds the runs
// it stopped by the tag it left in their error, and answers again.
func (w *stopWorker) Work(ctx context.Context, job *river.Job[StopArgs]) error {
	a := job.Args
	repo, err := w.gh.ForRepo(ctx, a.InstallationID, a.RepoID, a.Owner, a.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", a.Owner, a.Repo, err)
	}
	perm, err := repo.Permission(ctx, a.Requester)
	if err != nil {
		return fmt.Errorf("checking permission of %s: %w", a.Requester, err)
	}
	if !run.MayStart(perm) {
		w.log.InfoContext(ctx, "stop request from someone who may not write; ignored", "requester", a.Requester, "permission", perm)
		return nil
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	tag := fmt.Sprintf("stopped by %s (stop request %d)", a.Requester, job.ID)
	which := run.Cancellation{RepoID: a.RepoID, Issue: a.PR, FollowUpsOnly: !a.OnIssue, Reason: tag, StoppedBy: a.Requester}
	runs := store(w.pool)
	var stopped []stoppedRun
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		stopped = nil
		var waiting []stoppedRun
		// Two passes at least, and more until one finds nothing: a waiting run that the worker
		// promoted while this transaction waited for the row of the run it ended is queued only
		// for the next pass (as in cancelRuns).
		for pass := 0; ; pass++ {
			found, err := runs.CancelActive(ctx, tx, which)
			if err != nil {
				return fmt.Errorf("stopping follow-ups: %w", err)
			}
			// The requests waiting on the pull request are stopped too: they have neither a job
			// nor a reply. Their rows are locked after the active run's, as everywhere
			// (waiting.go).
			more, err := runs.CancelWaiting(ctx, tx, which)
			if err != nil {
				return fmt.Errorf("stopping waiting follow-ups: %w", err)
			}
			if len(found) == 0 && len(more) == 0 && pass > 0 {
				break
			}
			for _, c := range found {
				s := stoppedRun{run: c.ID, job: c.Job, comment: c.Comment, extra: c.ExtraRequests}
				if s.job != 0 {
					row, err := client.JobCancelTx(ctx, tx, s.job)
					if err != nil && !errors.Is(err, rivertype.ErrNotFound) {
						return fmt.Errorf("cancelling job %d: %w", s.job, err)
					}
					s.running = row != nil && row.State == rivertype.JobStateRunning
				}
				stopped = append(stopped, s)
			}
			for _, c := range more {
				waiting = append(waiting, stoppedRun{run: c.ID, extra: c.ExtraRequests, waiting: true})
			}
		}
		stopped = append(stopped, waiting...)
		if len(stopped) == 0 {
			return nil
		}
		// A stopped running run frees its slot for the installation's next parked run (parked.go).
		_, err := wakeParked(ctx, tx, runs, client, a.InstallationID, limitFrom(ctx))
		return err
	})
	if err != nil {
		return err
	}
	if len(stopped) == 0 { // a retry: what did the first attempt stop?
		rows, err := w.pool.Query(ctx, `SELECT id, 0, coalesce(comment_id, 0), extra_requests, started_at IS NULL AND job_id IS NULL FROM runs
			WHERE repo_id = $1 AND issue = $2 AND error = $3 ORDER BY id`, a.RepoID, a.PR, tag)
		if err != nil {
			return fmt.Errorf("finding the runs this request stopped: %w", err)
		}
		if stopped, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (stoppedRun, error) {
			s := stoppedRun{running: true} // its worker, if any, wrote its reply
			return s, r.Scan(&s.run, &s.job, &s.comment, &s.extra, &s.waiting)
		}); err != nil {
			return fmt.Errorf("finding the runs this request stopped: %w", err)
		}
	}
	w.log.InfoContext(ctx, "follow-ups stopped", "requester", a.Requester, "runs", len(stopped))
	for _, s := range stopped {
		if s.running || s.comment == 0 {
			continue
		}
		body := run.RenderStatus(run.Status{RunID: s.run, State: run.StateCancelled, FollowUp: !a.OnIssue, ExtraRequests: s.extra,
			Note: run.StoppedBeforeStart(a.Requester)})
		// The edit of a stopped run's reply is that run's write: its audit trail holds it.
		if err := repo.EditComment(githubapp.WithAuditRun(ctx, s.run), s.comment, body); err != nil {
			w.log.WarnContext(ctx, "editing the reply of a stopped run", logging.RunID(s.run), logging.Err(err))
		}
	}
	var active, waiting []int64
	for _, s := range stopped {
		if s.waiting {
			waiting = append(waiting, s.run)
		} else {
			active = append(active, s.run)
		}
	}
	// The reply speaks for every run the request stopped: it is in each one's audit trail (a
	// request that stopped nothing has no run to record it under).
	replyCtx := githubapp.WithAuditRuns(ctx, append(append([]int64{}, active...), waiting...)...)
	reply := run.StopReply(a.Requester, active, waiting)
	if a.OnIssue {
		reply = run.StopIssueReply(a.Requester, active)
	}
	if _, err := repo.Comment(replyCtx, a.PR, reply); err != nil {
		return fmt.Errorf("answering the stop request: %w", err)
	}
	return nil
}

// stoppedRun is a follow-up a stop request cancelled.
type stoppedRun struct {
	run, job, comment int64
	extra             int
	running           bool
	waiting           bool // a request that waited for the active run (waiting.go)
}
