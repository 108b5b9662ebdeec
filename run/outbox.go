package run

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/frognano/frognano/githubapp"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// A run's end is recorded before GitHub shows it, and a process may die in between (or
// GitHub may fail the write). So the end records, in the same statement as the outcome, what
// GitHub must still be told: the run's outbox (runs.outbox, migration 0011). It is written
// until it is, by whichever process comes next, and cleared once written:
//
//   - the worker that ended the run writes it at once (attempt.record);
//   - the transaction that recorded it queued a job to write it (Deliver: the queue's status
//     job, scheduled a little later so that it finds the fast path done);
//   - a retry of the run's own job writes it before anything else (Pipeline.Work);
//   - the queue's periodic cleanup queues that job again for an outbox whose job ran out of
//     tries (queue/outbox.go).
//
// The ends no attempt of the run records have one too: an unlabel or close that cancels the
// run (RecordCancelled, in the queue's Cancel: the cancelled worker writes it when its context
// ends), and the cleanup's end of a run no job will run any more (Store.EndAbandoned).
//
// One writer at a time (writeOutbox holds the run's row), and every write is idempotent: the
// status comment is edited to the rendering of the recorded outcome, or, for a run that had
// none (Post), looked for by its marker and edited, else posted; the label is removed only
// when the outcome asks for it and no later run on the issue exists (someone who labelled the
// issue again wants that run, not its removal). The check run and the pull request body are
// written by Publish before the outcome is recorded; Publish is idempotent, and a run that
// died there is still running, so its retry publishes again and ends it (or, on its job's last
// attempt, the cleanup ends it as abandoned).

// outbox is what the end of a run must still write to GitHub.
type outbox struct {
	// CommentID is the status comment (a follow-up's reply) to edit to Status; 0: none known.
	CommentID int64   `json:"comment_id,omitempty"`
	Status    *Status `json:"status,omitempty"` // its final content, rendered when written
	// Post: without a CommentID, Status is posted as the run's comment (a run GitHub refused
	// before it had one). Posting is not idempotent, so the writer first looks for the run's
	// own comment by its marker (statusMarker): a writer that died after GitHub took the post
	// (or the greeting an attempt posted before it could record its id) is found, and edited.
	Post bool `json:"post,omitempty"`
	// Unlabel is the label to take off the issue (a failed issue run: adding it again retries).
	Unlabel string `json:"unlabel,omitempty"`
}

// value is o as the runs.outbox column takes it: NULL when there is nothing to write.
func (o *outbox) value() any {
	if o == nil || (o.Status == nil && o.Unlabel == "") {
		return nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil // a Status always encodes
	}
	return string(b)
}

// Deliver queues, in tx, which has just recorded the end of run runID with an outbox, the
// job that writes that outbox to GitHub should the process that ended the run not write it
// (the queue's status job).
type Deliver func(ctx context.Context, tx pgx.Tx, runID int64) error

// WithDeliver makes s queue the writing of every outbox it records with d; it returns s.
func (s *Store) WithDeliver(d Deliver) *Store {
	s.deliver = d
	return s
}

// Ending steps, in the order a run's end passes them (Config.EndStep).
const (
	StepPublishing = "publishing" // before Publish
	StepPublished  = "published"  // Publish returned; the outcome is not recorded yet
	StepRecorded   = "recorded"   // the outcome and its outbox are committed
	StepPosted     = "posted"     // the status comment is posted (Post: none was found)
	StepCommented  = "commented"  // the status comment (a follow-up's reply) is edited
	StepUnlabelled = "unlabelled" // the label is removed
	StepWritten    = "written"    // the outbox is cleared
)

func (p *Pipeline) step(ctx context.Context, runID int64, step string) {
	if p.cfg.EndStep != nil {
		p.cfg.EndStep(ctx, runID, step)
	}
}

// record ends the run as state with its record and, when the run can still say so on GitHub,
// an outbox: the status comment's final content v (nil: none; with post, posted when the run
// has no comment yet) and, with unlabel, the removal of the label of an issue run. It writes
// that outbox at once (the fast path; a failure is left to the next writer) and reports false
// when the run was no longer running.
func (a *attempt) record(ctx context.Context, state, exitReason, errText, prURL string, prNumber int, v *Status, unlabel, post bool) (bool, error) {
	if a.status != nil {
		a.status.close() // no progress edit after the final one
	}
	o := a.outboxOf(v, unlabel, post)
	var pub *Publication
	if state == StateSucceeded {
		pub = a.published
	}
	ok, err := a.st.finish(ctx, a.run.ID, state, exitReason, errText, prURL, prNumber, o, pub)
	if err != nil || !ok {
		return ok, err
	}
	a.p.step(ctx, a.run.ID, StepRecorded)
	if o != nil {
		a.flush(ctx)
	}
	return true, nil
}

// outboxOf is what the end of this attempt's run leaves to write (nil: nothing).
func (a *attempt) outboxOf(v *Status, unlabel, post bool) *outbox {
	if a.repo == nil {
		return nil // GitHub was never reached: there is nothing of the run's on it
	}
	o := &outbox{}
	switch {
	case v != nil && a.run.CommentID != 0:
		o.CommentID, o.Status = a.run.CommentID, v
	case v != nil && post:
		o.Status, o.Post = v, true
	}
	// Only the label's runs remove it (adding it again is how to retry them); a mention's or
	// the API's run leaves the issue's labels alone.
	if l := cmp.Or(a.run.TriggerLabel, a.p.cfg.Label); unlabel && l != "" && a.run.Kind == KindIssue && (a.run.Trigger == "" || a.run.Trigger == TriggerLabel) {
		o.Unlabel = l // the label that started it: the repository's own, if its settings name one
	}
	if o.Status == nil && o.Unlabel == "" {
		return nil
	}
	return o
}

// flush writes the outbox this attempt's run has (the fast path); a failure is logged, and
// the outbox stays for the next writer.
func (a *attempt) flush(ctx context.Context) {
	if _, err := a.p.writeOutbox(ctx, a.repo, a.run.ID, a.run.Issue); err != nil {
		a.log.WarnContext(ctx, "writing the run's end to GitHub; it is left for the next writer", logging.Err(err))
	}
}

// errOutboxBusy: another process holds the run's outbox; it writes it, or leaves it for the
// next writer.
var errOutboxBusy = fault.Transient(errors.New("another process is writing the run's end to GitHub"))

// writeOutbox writes the outbox of run id (on issue or pull request issue) through repo, then
// clears it, and reports whether there was one. One writer at a time: it holds the run's row
// (FOR NO KEY UPDATE) from reading the outbox to clearing it, and a writer that finds the row
// held leaves it to its holder (errOutboxBusy); a process that dies drops the lock with its
// connection, and the outbox is still there for the next writer. Every read it makes is in
// that transaction, so a writer holds one connection of the pool, never waits for a second.
// A refusal GitHub will repeat (a deleted comment or issue) is given up: the outbox is
// cleared, and the error is a *FinalError. Any other error leaves the outbox for the next
// writer.
func (p *Pipeline) writeOutbox(ctx context.Context, repo Repo, id int64, issue int) (bool, error) {
	var wrote bool
	var refused error
	give := func(what string, err error) error {
		if fault.IsTransient(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		refused = errors.Join(refused, fmt.Errorf("%s: %w", what, err))
		return nil
	}
	err := pgx.BeginFunc(ctx, p.cfg.Store.pool, func(tx pgx.Tx) error {
		wrote, refused = false, nil
		var raw []byte
		var repoID int64
		var extra int
		err := tx.QueryRow(ctx, `SELECT outbox, repo_id, extra_requests FROM runs WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED`, id).Scan(&raw, &repoID, &extra)
		if errors.Is(err, pgx.ErrNoRows) {
			return errOutboxBusy // the row exists (its end was recorded): another writer holds it
		}
		if err != nil {
			return fmt.Errorf("reading the outbox of run %d: %w", id, err)
		}
		if raw == nil {
			return nil
		}
		o := &outbox{}
		if err := json.Unmarshal(raw, o); err != nil {
			return fmt.Errorf("reading the outbox of run %d: %w", id, err)
		}
		wrote = true
		if o.Status != nil {
			if err := p.writeStatus(ctx, tx, repo, id, issue, o, extra, give); err != nil {
				return err
			}
		}
		if o.Unlabel != "" {
			var later bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE repo_id = $1 AND issue = $2 AND id > $3)`,
				repoID, issue, id).Scan(&later); err != nil {
				return fmt.Errorf("looking for a later run on the issue: %w", err)
			}
			if !later {
				if err := repo.RemoveLabel(ctx, issue, o.Unlabel); err != nil {
					if err := give("removing the label", err); err != nil {
						return err
					}
				}
			}
			p.step(ctx, id, StepUnlabelled)
		}
		return p.cfg.Store.clearOutbox(ctx, tx, id)
	})
	if err != nil || !wrote {
		return wrote, err
	}
	p.step(ctx, id, StepWritten)
	if refused != nil {
		return true, final(refused)
	}
	return true, nil
}

// writeStatus makes the run's comment show o.Status, in writeOutbox's transaction tx: it edits
// o.CommentID, or, for a Post, the run's comment found by its marker, or posts it (and records
// its id). give classifies GitHub's errors (writeOutbox).
func (p *Pipeline) writeStatus(ctx context.Context, tx pgx.Tx, repo Repo, id int64, issue int, o *outbox, extra int, give func(string, error) error) error {
	v := *o.Status
	v.ExtraRequests = extra // requests are counted on a run until its end, none after it
	body := RenderStatus(v)
	comment := o.CommentID
	if comment == 0 && o.Post {
		found, err := repo.FindComment(ctx, issue, statusMarker(id))
		if err != nil {
			// Looking is refused (the issue is gone): so would the post be.
			return give("looking for the run's comment", err)
		}
		if found == 0 {
			posted, err := repo.Comment(ctx, issue, body)
			if err != nil {
				return give("posting the status comment", err)
			}
			p.step(ctx, id, StepPosted)
			found = posted
		} else if err := repo.EditComment(ctx, found, body); err != nil {
			return give("editing the status comment", err)
		}
		if err := p.cfg.Store.recordPosted(ctx, tx, id, found); err != nil {
			return err
		}
		p.step(ctx, id, StepCommented)
		return nil
	}
	if comment != 0 {
		if err := repo.EditComment(ctx, comment, body); err != nil {
			if err := give("editing the status comment", err); err != nil {
				return err
			}
		}
		p.step(ctx, id, StepCommented)
	}
	return nil
}

// WriteOutbox writes what the end of run id left for GitHub, if anything (see outbox), and
// reports whether there was anything. A refusal GitHub will repeat is a *FinalError (the
// outbox is given up); another process writing it is errOutboxBusy (IsOutboxBusy); any
// other error leaves it for a retry.
func (p *Pipeline) WriteOutbox(ctx context.Context, id int64, log *slog.Logger) (bool, error) {
	r, pending, err := p.cfg.Store.pendingOutbox(ctx, id)
	if err != nil || !pending {
		return false, err
	}
	ctx = githubapp.WithAuditRun(ctx, id)
	repo, err := p.cfg.GitHub.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return true, fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	log.InfoContext(ctx, "writing what the run's end left for GitHub", "state", r.State)
	wrote, err := p.writeOutbox(ctx, repo, r.ID, r.Issue)
	return wrote || errors.Is(err, errOutboxBusy), err
}

// IsOutboxBusy reports whether err is WriteOutbox's answer that another process holds the
// run's outbox (and writes it, or leaves it for the next writer).
func IsOutboxBusy(err error) bool { return errors.Is(err, errOutboxBusy) }

// pendingOutbox reads run id and whether its end left an outbox.
func (s *Store) pendingOutbox(ctx context.Context, id int64) (*row, bool, error) {
	r := &row{ID: id}
	var pending bool
	err := s.pool.QueryRow(ctx, `SELECT installation_id, repo_id, owner, repo, issue, state, outbox IS NOT NULL FROM runs WHERE id = $1`, id).Scan(
		&r.InstallationID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.State, &pending)
	if err != nil {
		return nil, false, fmt.Errorf("reading the outbox of run %d: %w", id, err)
	}
	return r, pending, nil
}
