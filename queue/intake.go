package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
)

// Delivery identifies one webhook delivery. HookTarget says which hook or App
// sent it, so two senders sharing a GUID space never collide.
type Delivery struct {
	HookTarget     string
	ID             string
	Event          string
	Action         string
	InstallationID int64
	// Sender is who caused the event (its sender's login): the runs a Cancel cancels keep it
	// as who stopped them (runs.stopped_by). "": not known.
	Sender string
}

// RunRequest is a labeled issue that should get a run, or (Kind run.KindFollowUp) a reviewer's
// request on a frognano pull request, or (run.KindCI) a CI failure on one.
type RunRequest struct {
	InstallationID int64
	RepoID         int64
	Owner, Repo    string
	Issue          int    // the issue, or the pull request of a follow-up
	Labeler        string // who labelled, or who asked for the follow-up
	// Kind is run.KindIssue ("" too), run.KindFollowUp or run.KindCI.
	Kind string
	// Request is the reviewer's text and RequestURL the comment or review that holds it
	// (follow-ups only). The worker shows it to the model only after it has checked that
	// Labeler may write.
	Request, RequestURL string
	// CISHA is the commit whose CI failed (Kind run.KindCI).
	CISHA string
	// SourceID is what the worker reads on the host once the request is checked: the review
	// whose line comments come with a follow-up, or the failed check suite of a CI follow-up
	// (0: none).
	SourceID int64
	// Trigger is how the run was asked for (run.Trigger*; "": by its Kind). Options are the
	// options asked at trigger (unchecked: the worker checks them against the repository's
	// settings and the operator's ceilings); TokenID the API token that asked (0: none).
	Trigger string
	Options run.Options
	TokenID int64
	// TriggerLabel is the label whose event asked for an issue's run (run.NewRun.TriggerLabel).
	TriggerLabel string
}

// Accepted reports what Accept did.
type Accepted struct {
	// Duplicate: this delivery was seen before; nothing was changed.
	Duplicate bool
	// AlreadyActive: the issue already had a queued or running run (RunID);
	// no second run was started, the existing run's extra_requests was
	// incremented and its worker mentions it in the status comment.
	AlreadyActive bool
	// Waiting: the pull request's active run had not passed its check yet, so the request
	// waits as run RunID (state waiting, no job): a new one, the one waiting for the same
	// source (a line comment of the review it answers: part of that run), or the one its
	// author already had waiting (the request counted in its extra_requests). The oldest
	// waiting run becomes queued when the active run ends; the others still waiting are counted
	// on it once it passes its check (queue/waiting.go).
	Waiting bool
	RunID   int64
	JobID   int64
}

// Accept records the delivery, inserts the run and its River job in ONE transaction (or, when
// the issue or pull request already has an active run, counts the request on it or records it
// as a waiting run: waiting.go). It returns only after that transaction has committed, so a nil
// error means the request is durable. Redeliveries of the same delivery (including concurrent
// ones) are recognised through the deliveries table.
func (c *Client) Accept(ctx context.Context, d Delivery, req RunRequest) (Accepted, error) {
	var res Accepted
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		res = Accepted{}
		// The delivery first, and the run only if the delivery is new. A concurrent transaction
		// inserting the same delivery makes this statement wait for it and then do nothing.
		tag, err := tx.Exec(ctx, `INSERT INTO deliveries (hook_target, delivery_id, event, action, installation_id, outcome)
			VALUES ($1, $2, $3, $4, $5, 'queued')
			ON CONFLICT (hook_target, delivery_id) DO NOTHING`,
			d.HookTarget, d.ID, d.Event, d.Action, req.InstallationID)
		if err != nil {
			return fmt.Errorf("recording delivery: %w", err)
		}
		if tag.RowsAffected() == 0 {
			res.Duplicate = true
			return nil
		}
		n := newRun(d, req)
		runID, err := c.runs.Queue(ctx, tx, n)
		if err != nil {
			return err
		}
		if runID == 0 {
			if res, err = waitOrCount(ctx, tx, c.runs, d, req, n.Kind); err != nil {
				return err
			}
			// A mention on an issue whose run is active is answered with that run.
			if res.AlreadyActive && n.Kind == run.KindIssue && req.Trigger == run.TriggerMention {
				if _, err := c.river.InsertTx(ctx, tx, activeReplyArgs{InstallationID: req.InstallationID, RepoID: req.RepoID,
					Owner: req.Owner, Repo: req.Repo, Issue: req.Issue, Requester: req.Labeler, RunID: res.RunID}, nil); err != nil {
					return fmt.Errorf("queueing the reply to a mention: %w", err)
				}
			}
			return nil
		}
		res.RunID = runID
		ins, err := c.river.InsertTx(ctx, tx, RunArgs{
			RunID: res.RunID, InstallationID: req.InstallationID,
			Owner: req.Owner, Repo: req.Repo, Issue: req.Issue,
		}, nil)
		if err != nil {
			return fmt.Errorf("inserting run job: %w", err)
		}
		res.JobID = ins.Job.ID
		if err := c.runs.LinkJob(ctx, tx, res.RunID, res.JobID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE deliveries SET run_id = $1 WHERE hook_target = $2 AND delivery_id = $3`,
			res.RunID, d.HookTarget, d.ID); err != nil {
			return fmt.Errorf("linking delivery and run: %w", err)
		}
		return nil
	})
	if err != nil {
		return Accepted{}, fmt.Errorf("accepting run request: %w", err)
	}
	return res, nil
}

// newRun is req, brought by delivery d, as the run's Store records it.
func newRun(d Delivery, req RunRequest) run.NewRun {
	return run.NewRun{HookTarget: d.HookTarget, DeliveryID: d.ID, InstallationID: req.InstallationID, RepoID: req.RepoID,
		Owner: req.Owner, Repo: req.Repo, Issue: req.Issue, Labeler: req.Labeler, Kind: cmp.Or(req.Kind, run.KindIssue),
		Request: req.Request, RequestURL: req.RequestURL, CISHA: req.CISHA, SourceID: req.SourceID,
		Trigger: req.Trigger, Asked: req.Options, TokenID: req.TokenID, TriggerLabel: req.TriggerLabel}
}

// Cancelled reports what Cancel did.
type Cancelled struct {
	Duplicate bool
	RunIDs    []int64
}

// Cancel records the delivery and cancels the issue's queued or running run (and the runs
// waiting on it) in ONE transaction: the run becomes cancelled and its River job is
// cancelled (a running worker's context is cancelled when River notices).
func (c *Client) Cancel(ctx context.Context, d Delivery, repoID int64, issue int, reason string) (Cancelled, error) {
	res, err := c.cancelRuns(ctx, d, run.Cancellation{RepoID: repoID, Issue: issue}, reason, true)
	if err != nil {
		return Cancelled{}, fmt.Errorf("cancelling runs for issue %d: %w", issue, err)
	}
	return res, nil
}

// CancelInstallation records the delivery and cancels every queued or running run of an
// installation in ONE transaction: the App was uninstalled or suspended there, so no run of it
// could publish. Running workers see their context cancelled and remove their sandboxes; no
// status comment is written, since the App can no longer write to those repositories.
func (c *Client) CancelInstallation(ctx context.Context, d Delivery, installationID int64, reason string) (Cancelled, error) {
	res, err := c.cancelRuns(ctx, d, run.Cancellation{InstallationID: installationID}, reason, false)
	if err != nil {
		return Cancelled{}, fmt.Errorf("cancelling runs of installation %d: %w", installationID, err)
	}
	return res, nil
}

// cancelRuns is Cancel and CancelInstallation: in one transaction it records the delivery,
// cancels the active and waiting runs that which takes (with reason and the delivery's sender)
// and cancels their River jobs. With rewriteStatus, a run that has a status comment gets its
// outbox (the comment's final content, run.Store.RecordCancelled) and the status job that
// writes it, whether or not a worker runs it.
func (c *Client) cancelRuns(ctx context.Context, d Delivery, which run.Cancellation, reason string, rewriteStatus bool) (Cancelled, error) {
	which.Reason, which.StoppedBy = reason, d.Sender
	var res Cancelled
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		res = Cancelled{}
		fresh, err := recordDelivery(ctx, tx, d, "")
		if err != nil {
			return err
		}
		if !fresh {
			res.Duplicate = true
			return nil
		}
		// Two passes at least, and more until one finds nothing. A run that an end promoted
		// while this transaction waited for the ended run's row (or that the cleanup promoted
		// while it waited for the waiting run's) was waiting in the snapshot of the statement
		// that waited, and is queued for the next statement, which takes waiting runs only:
		// only the next pass sees it (waiting.go).
		for pass := 0; ; pass++ {
			n, err := c.cancelPass(ctx, tx, which, rewriteStatus, &res)
			if err != nil {
				return err
			}
			if n == 0 && pass > 0 {
				break
			}
		}
		if len(res.RunIDs) == 0 {
			return setDeliveryOutcome(ctx, tx, d, 0, "nothing_to_cancel")
		}
		return setDeliveryOutcome(ctx, tx, d, res.RunIDs[0], "cancelled")
	})
	return res, err
}

// cancelPass is one pass of cancelRuns in tx: it cancels the active runs that which takes and
// their jobs, then the runs waiting on them, adds them to res and returns how many it cancelled.
func (c *Client) cancelPass(ctx context.Context, tx pgx.Tx, which run.Cancellation, rewriteStatus bool, res *Cancelled) (int, error) {
	found, err := c.runs.CancelActive(ctx, tx, which)
	if err != nil {
		return 0, err
	}
	for _, p := range found {
		res.RunIDs = append(res.RunIDs, p.ID)
		running := false
		if p.Job != 0 {
			job, err := c.river.JobCancelTx(ctx, tx, p.Job)
			if err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return 0, fmt.Errorf("cancelling job %d: %w", p.Job, err)
			}
			running = job != nil && job.State == rivertype.JobStateRunning
		}
		// The cancelled status comment is in the run's outbox from this transaction on, and its
		// status job with it, as every end's (outbox.go): a running worker writes it when River
		// cancels its context, and the job, due a little later, after it should it die then; a
		// run waiting for a retry has nobody to, and its job is due at once.
		if rewriteStatus && p.Comment != 0 {
			if _, err := c.runs.RecordCancelled(ctx, tx, p.ID, c.cfg.PublicURL); err != nil {
				return 0, err
			}
			opts := &river.InsertOpts{}
			if running {
				opts.ScheduledAt = time.Now().Add(outboxGrace)
			}
			if _, err := c.river.InsertTx(ctx, tx, statusArgs{RunID: p.ID, Outbox: true}, opts); err != nil {
				return 0, fmt.Errorf("queueing status update for run %d: %w", p.ID, err)
			}
		}
	}
	// The runs waiting on the same pull requests go with them: they have neither a job nor a
	// status comment. Their rows are locked after the active runs', as everywhere
	// (waiting.go).
	waiting, err := c.runs.CancelWaiting(ctx, tx, which)
	if err != nil {
		return 0, err
	}
	for _, w := range waiting {
		res.RunIDs = append(res.RunIDs, w.ID)
	}
	// A cancelled running run frees its slot: the installation's next parked runs take it, in
	// this transaction (parked.go); the rows it changed are locked before the installation.
	woken := map[int64]bool{}
	for _, p := range found {
		if woken[p.InstallationID] {
			continue
		}
		woken[p.InstallationID] = true
		if _, err := wakeParked(ctx, tx, c.runs, c.river, p.InstallationID, c.cfg.PerInstallationLimit); err != nil {
			return 0, err
		}
	}
	return len(found) + len(waiting), nil
}

// Record stores a delivery we acknowledge without acting on it (for example
// installation events). It reports whether the delivery was seen before.
func (c *Client) Record(ctx context.Context, d Delivery, outcome string) (duplicate bool, err error) {
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		fresh, err := recordDelivery(ctx, tx, d, outcome)
		duplicate = !fresh
		return err
	})
	if err != nil {
		return false, fmt.Errorf("recording delivery: %w", err)
	}
	return duplicate, nil
}

// recordDelivery inserts the delivery, reporting false if it already exists.
// A concurrent transaction inserting the same key makes this one wait for
// it, which is what serialises 20 simultaneous redeliveries into one run.
func recordDelivery(ctx context.Context, tx pgx.Tx, d Delivery, outcome string) (bool, error) {
	var installation *int64
	if d.InstallationID != 0 {
		installation = &d.InstallationID
	}
	tag, err := tx.Exec(ctx, `INSERT INTO deliveries (hook_target, delivery_id, event, action, installation_id, outcome)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (hook_target, delivery_id) DO NOTHING`,
		d.HookTarget, d.ID, d.Event, d.Action, installation, outcome)
	if err != nil {
		return false, fmt.Errorf("recording delivery: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func setDeliveryOutcome(ctx context.Context, tx pgx.Tx, d Delivery, runID int64, outcome string) error {
	var run *int64
	if runID != 0 {
		run = &runID
	}
	if _, err := tx.Exec(ctx, `UPDATE deliveries SET run_id = $3, outcome = $4 WHERE hook_target = $1 AND delivery_id = $2`,
		d.HookTarget, d.ID, run, outcome); err != nil {
		return fmt.Errorf("recording delivery outcome: %w", err)
	}
	return nil
}
