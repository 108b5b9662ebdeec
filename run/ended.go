package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/frognano/frognano/githubapp"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/internal/fault"
)

// This file holds what is said of runs that ended with no attempt of theirs to say it: a run
// the queue cancelled (an unlabel or a close), one the queue's cleanup ended because no job
// will run it any more, and the runs a stop request stopped.

// AbandonedError is the error recorded on a run EndAbandoned ended.
const AbandonedError = "its job ended without ending the run (the worker died on its last attempt, or could not record the end); " +
	"ended by the cleanup"

// EndAbandoned ends active run id as failed when dead, an SQL condition on the run as alias r
// (the queue's: no job will run it any more), still holds once the run's row is locked: it is
// evaluated in a statement of its own after the lock, so it sees every transaction that changed
// the run before (a wake that gave it a new job, an operator's retry). In the same transaction
// it records the run's outbox, as every end does: the status comment says that frognano stopped
// working on the run, why, and how to retry (posted when the run has none and had passed its
// check, found by its marker first: an attempt may have posted it without recording it), and an
// issue run's label (label; "": none) comes off when the label started it, so that adding it
// again retries; it promotes the
// run waiting behind it (Promote) and queues the outbox's writing (Deliver). publicURL links
// the run's page (""; none). It reports whether it ended the run.
func (s *Store) EndAbandoned(ctx context.Context, id int64, dead, label, publicURL string) (bool, error) {
	ended := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ended = false
		var kind, trigger, triggerLabel string
		var comment int64
		var checked, published bool
		err := tx.QueryRow(ctx, `SELECT kind, coalesce(trigger, ''), coalesce(trigger_label, ''), coalesce(comment_id, 0), checked_at IS NOT NULL,
				agent_done_at IS NOT NULL AND patch IS NOT NULL
			FROM runs WHERE id = $1 AND state IN ('queued', 'running') FOR UPDATE`, id).Scan(&kind, &trigger, &triggerLabel, &comment, &checked, &published)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("locking run: %w", err)
		}
		var still bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs r WHERE r.id = $1 AND `+dead+`)`, id).Scan(&still); err != nil || !still {
			return err
		}
		byLabel := kind == KindIssue && (trigger == "" || trigger == TriggerLabel)
		v := Status{RunID: id, State: StateFailed, Abandoned: true, Note: abandonedNote(kind, byLabel, published),
			FollowUp: kind != KindIssue, Page: RunPageURL(publicURL, id)}
		o := &outbox{}
		switch {
		case comment != 0:
			o.CommentID, o.Status = comment, &v
		case checked:
			o.Status, o.Post = &v, true // its requester may start runs: say it, as a refusal would
		}
		if byLabel && cmp.Or(triggerLabel, label) != "" {
			o.Unlabel = cmp.Or(triggerLabel, label) // the label that started it: the repository's own, if its settings name one
		}
		e, err := s.abandon(ctx, tx, id, o)
		if err != nil {
			return err
		}
		ended = true
		return s.afterEnd(ctx, tx, e, o.value() != nil)
	})
	if err != nil {
		return false, fmt.Errorf("ending run %d, whose job ended: %w", id, err)
	}
	return ended, nil
}

// RecordCancelled records, in tx, which has just cancelled run id (an unlabel or a close: the
// queue's Cancel, through CancelActive), the run's outbox: its status comment (a follow-up's
// reply) says it was cancelled, as its worker would say it. It reports false when the run has
// no comment (nothing to write). The caller queues the writing in tx, as every end does: a
// worker killed as its context ends leaves it to that job. publicURL links the run's page
// ("": none).
func (s *Store) RecordCancelled(ctx context.Context, tx pgx.Tx, id int64, publicURL string) (bool, error) {
	var kind string
	var comment int64
	if err := tx.QueryRow(ctx, `SELECT kind, coalesce(comment_id, 0) FROM runs WHERE id = $1`, id).Scan(&kind, &comment); err != nil {
		return false, fmt.Errorf("reading cancelled run %d: %w", id, err)
	}
	if comment == 0 {
		return false, nil
	}
	v := Status{RunID: id, State: StateCancelled, Note: planFor(kind).cancelled(), FollowUp: kind != KindIssue, Page: RunPageURL(publicURL, id)}
	o := &outbox{CommentID: comment, Status: &v}
	if err := s.setOutbox(ctx, tx, id, o); err != nil {
		return false, err
	}
	return true, nil
}

// RewriteStatus rewrites the status comment of run id, which ended with nobody to rewrite it:
// cancelled (while it waited for a retry) or, with dead, failed by the queue's cleanup
// (DeadRunNote). A run in any other state, or without a comment, is left alone. An error GitHub
// will give again is a *FinalError.
func (p *Pipeline) RewriteStatus(ctx context.Context, id int64, dead bool) error {
	ctx = githubapp.WithAuditRun(ctx, id)
	r, err := p.cfg.Store.load(ctx, id)
	if err != nil {
		return err
	}
	var note string
	switch r.State {
	case StateCancelled:
		note = noteIssueCancelled
	case StateFailed:
		if !dead {
			return nil
		}
		note = DeadRunNote
	default:
		return nil
	}
	if r.CommentID == 0 {
		return nil
	}
	repo, err := p.cfg.GitHub.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	body := RenderStatus(Status{RunID: r.ID, State: r.State, Note: note, ExtraRequests: r.ExtraRequests})
	if err := repo.EditComment(ctx, r.CommentID, body); err != nil {
		if fault.IsTransient(err) {
			return fmt.Errorf("editing status comment: %w", err)
		}
		return final(fmt.Errorf("editing status comment: %w", err))
	}
	return nil
}
