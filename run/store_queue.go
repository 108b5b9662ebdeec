package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The Store's writes that the queue makes in transactions of its own: a request recorded as a
// run, the runs waiting on a pull request, a parked run woken, the runs a cancel or a stop
// ends. Each takes the queue's transaction, so that the run's row and River's job (inserted by
// the queue in the same transaction) commit together or not at all; the rules they serve (who
// waits, who is woken, who is cancelled and in which order the rows are locked) are the
// queue's (queue/intake.go, waiting.go, parked.go, stop.go). The Store is the only writer of
// the runs table (internal/layout checks it).

// NewRun is a request the queue records as a run (Queue, AddWaiting): the delivery that
// brought it and what the worker needs to work it.
type NewRun struct {
	HookTarget, DeliveryID string
	InstallationID, RepoID int64
	Owner, Repo            string
	Issue                  int    // the issue, or the pull request of a follow-up
	Labeler                string // who labelled, or who asked for the follow-up
	Kind                   string // KindIssue ("" too), KindFollowUp or KindCI
	// Request and RequestURL are a follow-up's text and the comment or review that holds it;
	// CISHA the commit whose CI failed; SourceID the review or check suite read once the run
	// passes its check (0: none).
	Request, RequestURL, CISHA string
	SourceID                   int64
	// Trigger is how the run was asked for (Trigger*; "": by its kind, TriggerLabel for an
	// issue); Asked the options asked at trigger, unchecked; TokenID the API token that asked.
	Trigger string
	Asked   Options
	TokenID int64
	// TriggerLabel is the label whose event asked for an issue's run (runs.trigger_label;
	// "": not a label's run). The run checks it against the repository's settings.
	TriggerLabel string
}

// trigger is n's trigger, or the one its kind implies.
func (n NewRun) trigger() string {
	if n.Trigger != "" {
		return n.Trigger
	}
	switch n.Kind {
	case KindFollowUp:
		return TriggerFollowUp
	case KindCI:
		return TriggerCI
	default:
		return TriggerLabel
	}
}

// Ref is what a run's job carries of it.
type Ref struct {
	ID, InstallationID int64
	Owner, Repo        string
	Issue              int
}

// Queue records n as a queued run in tx, the transaction that recorded its delivery, and
// returns its id; 0 when its issue or pull request already has an active (queued or running)
// run, which is left alone.
func (s *Store) Queue(ctx context.Context, tx pgx.Tx, n NewRun) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
			kind, request, request_url, ci_sha, source_id, trigger, asked_base, asked_attempts, asked_model, token_id, trigger_label, asked_refused)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), nullif($11, ''), nullif($12, ''), nullif($13::bigint, 0),
			$14, nullif($15, ''), nullif($16::integer, 0), nullif($17, ''), nullif($18::bigint, 0), nullif($19, ''), nullif($20, ''))
		ON CONFLICT (repo_id, issue) WHERE state IN ('queued', 'running') DO NOTHING
		RETURNING id`,
		n.HookTarget, n.DeliveryID, n.InstallationID, n.RepoID, n.Owner, n.Repo, n.Issue, n.Labeler,
		cmp.Or(n.Kind, KindIssue), CleanText(n.Request), n.RequestURL, n.CISHA, n.SourceID,
		n.trigger(), n.Asked.Base, n.Asked.Attempts, n.Asked.Model, n.TokenID, n.TriggerLabel, n.Asked.refusedColumn()).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recording run: %w", err)
	}
	return id, nil
}

// AddWaiting records n in tx as a run waiting for its pull request's active run (state
// waiting, no job: queue/waiting.go) and returns its id.
func (s *Store) AddWaiting(ctx context.Context, tx pgx.Tx, n NewRun) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue,
			labeler, kind, request, request_url, ci_sha, source_id, state, trigger, asked_base, asked_attempts, asked_model, token_id, asked_refused)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), nullif($11, ''), nullif($12, ''), nullif($13::bigint, 0), 'waiting',
			$14, nullif($15, ''), nullif($16::integer, 0), nullif($17, ''), nullif($18::bigint, 0), nullif($19, ''))
		RETURNING id`,
		n.HookTarget, n.DeliveryID, n.InstallationID, n.RepoID, n.Owner, n.Repo, n.Issue, n.Labeler,
		cmp.Or(n.Kind, KindIssue), CleanText(n.Request), n.RequestURL, n.CISHA, n.SourceID,
		n.trigger(), n.Asked.Base, n.Asked.Attempts, n.Asked.Model, n.TokenID, n.Asked.refusedColumn()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("recording a waiting run: %w", err)
	}
	return id, nil
}

// CountRequests counts n more requests on run id (its extra_requests, which its status
// comment shows), in tx.
func (s *Store) CountRequests(ctx context.Context, tx pgx.Tx, id int64, n int) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET extra_requests = extra_requests + $2 WHERE id = $1`, id, n); err != nil {
		return fmt.Errorf("counting a request on run %d: %w", id, err)
	}
	return nil
}

// LinkJob records, in tx, that job is the River job that works run id (inserted in tx).
func (s *Store) LinkJob(ctx context.Context, tx pgx.Tx, id, job int64) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET job_id = $2 WHERE id = $1`, id, job); err != nil {
		return fmt.Errorf("linking run %d to its job: %w", id, err)
	}
	return nil
}

// PromoteWaiting makes the oldest run waiting on pull request (repoID, issue) queued
// (promoted_at), locking its row, in tx, which has just ended the pull request's active run;
// the caller inserts its job and links it (LinkJob). It returns the promoted run, ID 0 when
// none waited.
func (s *Store) PromoteWaiting(ctx context.Context, tx pgx.Tx, repoID int64, issue int) (Ref, error) {
	var r Ref
	err := tx.QueryRow(ctx, `UPDATE runs SET state = 'queued', promoted_at = now()
		WHERE id = (SELECT id FROM runs WHERE repo_id = $1 AND issue = $2 AND state = 'waiting' ORDER BY id LIMIT 1 FOR UPDATE)
		RETURNING id, installation_id, owner, repo, issue`, repoID, issue).Scan(
		&r.ID, &r.InstallationID, &r.Owner, &r.Repo, &r.Issue)
	if errors.Is(err, pgx.ErrNoRows) {
		return Ref{}, nil
	}
	if err != nil {
		return Ref{}, fmt.Errorf("promoting the oldest waiting run: %w", err)
	}
	return r, nil
}

// Wake takes parked run id out of its park (parked_at cleared) with job, its new job inserted
// in tx (queue/parked.go).
func (s *Store) Wake(ctx context.Context, tx pgx.Tx, id, job int64) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET parked_at = NULL, job_id = $2 WHERE id = $1`, id, job); err != nil {
		return fmt.Errorf("waking parked run %d: %w", id, err)
	}
	return nil
}

// Cancellation says which runs a cancel ends (Store.CancelActive, Store.CancelWaiting) and
// what it records of why.
type Cancellation struct {
	// InstallationID, when set, takes every run of the installation (an uninstall); otherwise
	// the runs of issue or pull request Issue of repository RepoID.
	InstallationID int64
	RepoID         int64
	Issue          int
	// FollowUpsOnly takes only the follow-ups (a reviewer's and CI's) among the active runs:
	// a stop request.
	FollowUpsOnly bool
	Reason        string // recorded as the runs' error
	StoppedBy     string // who stopped them (runs.stopped_by); "": not known
}

// where is c's condition on the runs as SQL, with its parameters after reason's and
// stopped_by's ($1 and $2).
func (c Cancellation) where() (string, []any) {
	args := []any{c.Reason, c.StoppedBy}
	if c.InstallationID != 0 {
		return "installation_id = $3", append(args, c.InstallationID)
	}
	return "repo_id = $3 AND issue = $4", append(args, c.RepoID, c.Issue)
}

// Cancelled is a run a cancel ended.
type Cancelled struct {
	ID, InstallationID int64
	Job, Comment       int64 // its River job and status comment (a follow-up's reply); 0: none
	ExtraRequests      int
}

// CancelActive ends, in tx, the active (queued or running) runs that c takes as cancelled,
// locking their rows, and returns them. The caller cancels their jobs (and, in the same
// transaction, records what their comment must say: RecordCancelled).
func (s *Store) CancelActive(ctx context.Context, tx pgx.Tx, c Cancellation) ([]Cancelled, error) {
	where, args := c.where()
	if c.FollowUpsOnly {
		where += " AND kind IN ('followup', 'ci')"
	}
	rows, err := tx.Query(ctx, `UPDATE runs SET state = 'cancelled', finished_at = now(), exit_reason = 'cancelled',
			error = $1, stopped_by = nullif($2, '')
		WHERE `+where+` AND state IN ('queued', 'running')
		RETURNING id, installation_id, coalesce(job_id, 0), coalesce(comment_id, 0), extra_requests`, args...)
	if err != nil {
		return nil, fmt.Errorf("cancelling runs: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Cancelled, error) {
		var c Cancelled
		return c, r.Scan(&c.ID, &c.InstallationID, &c.Job, &c.Comment, &c.ExtraRequests)
	})
	if err != nil {
		return nil, fmt.Errorf("cancelling runs: %w", err)
	}
	return found, nil
}

// CancelWaiting ends, in tx, the waiting runs that c takes as cancelled and returns them (a
// waiting run has neither a job nor a comment). The caller has ended their active runs first:
// rows are locked on the active run before the waiting ones, everywhere (queue/waiting.go).
func (s *Store) CancelWaiting(ctx context.Context, tx pgx.Tx, c Cancellation) ([]Cancelled, error) {
	where, args := c.where()
	rows, err := tx.Query(ctx, `UPDATE runs SET state = 'cancelled', finished_at = now(), exit_reason = 'cancelled',
			error = $1, stopped_by = nullif($2, '')
		WHERE `+where+` AND state = 'waiting'
		RETURNING id, installation_id, extra_requests`, args...)
	if err != nil {
		return nil, fmt.Errorf("cancelling waiting runs: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Cancelled, error) {
		var c Cancelled
		return c, r.Scan(&c.ID, &c.InstallationID, &c.ExtraRequests)
	})
	if err != nil {
		return nil, fmt.Errorf("cancelling waiting runs: %w", err)
	}
	return found, nil
}
