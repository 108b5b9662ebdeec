package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/githubapp"
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
// Every write is idempotent: the status comment is edited to the rendering of the recorded
// outcome, and the label is removed only when the outcome asks for it and no later run on the
// issue exists (someone who labelled the issue again wants that run, not its removal). The
// check run and the pull request body are written by Publish before the outcome is recorded;
// Publish is idempotent, and a run that died there is still running, so its retry publishes
// again and ends it.

// outbox is what the end of a run must still write to GitHub.
type outbox struct {
	// CommentID is the status comment (a follow-up's reply) to edit to Status; 0: none.
	CommentID int64   `json:"comment_id,omitempty"`
	Status    *Status `json:"status,omitempty"` // its final content, rendered when written
	// Unlabel is the label to take off the issue (a failed issue run: adding it again retries).
	Unlabel string `json:"unlabel,omitempty"`
	// Post: the run has no status comment yet; Status is posted as a new one (postStatus).
	// Posting is set before the post is sent: a writer that finds it looks for the comment an
	// earlier writer may have posted before it died, so the comment is never posted twice.
	Post    bool `json:"post,omitempty"`
	Posting bool `json:"posting,omitempty"`
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
// an outbox: the status comment's final content v (nil: none) and, with unlabel, the removal
// of the label of an issue run. It writes that outbox at once (the fast path; a failure is
// left to the next writer) and reports false when the run was no longer running.
func (a *attempt) record(ctx context.Context, state, exitReason, errText, prURL string, prNumber int, v *Status, unlabel bool) (bool, error) {
	if a.status != nil {
		a.status.close() // no progress edit after the final one
	}
	o := a.outboxOf(v, unlabel)
	ok, err := a.st.finish(ctx, a.run.ID, state, exitReason, errText, prURL, prNumber, o)
	if err != nil || !ok {
		return ok, err
	}
	a.p.step(ctx, a.run.ID, StepRecorded)
	a.flush(ctx, o)
	return true, nil
}

// outboxOf is what the end of this attempt's run leaves to write (nil: nothing).
func (a *attempt) outboxOf(v *Status, unlabel bool) *outbox {
	if a.repo == nil {
		return nil // GitHub was never reached: there is nothing of the run's on it
	}
	o := &outbox{}
	if v != nil && a.run.CommentID != 0 {
		o.CommentID, o.Status = a.run.CommentID, v
	} else if v != nil && a.postStatus {
		o.Status, o.Post = v, true
	}
	if unlabel && a.p.cfg.Label != "" && a.run.Kind == KindIssue {
		o.Unlabel = a.p.cfg.Label
	}
	if o.Status == nil && o.Unlabel == "" {
		return nil
	}
	return o
}

// flush writes outbox o of this attempt's run (the fast path); a failure is logged, and the
// outbox stays for the next writer.
func (a *attempt) flush(ctx context.Context, o *outbox) {
	if o == nil {
		return
	}
	if err := a.p.writeOutbox(ctx, a.repo, a.run.ID, a.run.RepoID, a.run.Issue, o); err != nil {
		a.log.WarnContext(ctx, "writing the run's end to GitHub; it is left for the next writer", logging.Err(err))
	}
}

// writeOutbox writes outbox o of run id (on issue or pull request issue of repository repoID)
// through repo, then clears it. A refusal GitHub will repeat (a deleted comment or issue) is
// given up: the outbox is cleared, and the error is a *FinalError. Any other error leaves the
// outbox for the next writer.
func (p *Pipeline) writeOutbox(ctx context.Context, repo Repo, id, repoID int64, issue int, o *outbox) error {
	st := p.cfg.Store
	var refused error
	give := func(what string, err error) error {
		if fault.IsTransient(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		refused = errors.Join(refused, fmt.Errorf("%s: %w", what, err))
		return nil
	}
	posted := false
	if o.Status != nil && o.CommentID == 0 && o.Post {
		cid, err := p.postStatus(ctx, repo, id, issue, o)
		if err != nil {
			if err := give("posting the status comment", err); err != nil {
				return err
			}
		}
		o.CommentID, posted = cid, cid != 0
		p.step(ctx, id, StepCommented)
	}
	if o.Status != nil && o.CommentID != 0 && !posted {
		v := *o.Status
		_, extra, err := st.current(ctx, id)
		if err != nil {
			return err
		}
		v.ExtraRequests = extra // requests are counted on a run until its end, none after it
		if err := repo.EditComment(ctx, o.CommentID, RenderStatus(v)); err != nil {
			if err := give("editing the status comment", err); err != nil {
				return err
			}
		}
		p.step(ctx, id, StepCommented)
	}
	if o.Unlabel != "" {
		later, err := st.laterRun(ctx, id, repoID, issue)
		if err != nil {
			return err
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
	if err := st.exec(ctx, "clearing the run's outbox", `UPDATE runs SET outbox = NULL WHERE id = $1`, id); err != nil {
		return err
	}
	p.step(ctx, id, StepWritten)
	if refused != nil {
		return final(refused)
	}
	return nil
}

// WriteOutbox writes what the end of run id left for GitHub, if anything (see outbox), and
// reports whether there was anything. A refusal GitHub will repeat is a *FinalError (the
// outbox is given up); any other error leaves it for a retry.
func (p *Pipeline) WriteOutbox(ctx context.Context, id int64, log *slog.Logger) (bool, error) {
	r, o, err := p.cfg.Store.pendingOutbox(ctx, id)
	if err != nil || o == nil {
		return false, err
	}
	ctx = githubapp.WithAuditRun(ctx, id)
	repo, err := p.cfg.GitHub.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return true, fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	log.InfoContext(ctx, "writing what the run's end left for GitHub", "state", r.State)
	return true, p.writeOutbox(ctx, repo, r.ID, r.RepoID, r.Issue, o)
}

// pendingOutbox reads run id and the outbox its end left (nil: none).
func (s *Store) pendingOutbox(ctx context.Context, id int64) (*row, *outbox, error) {
	r := &row{ID: id}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT installation_id, repo_id, owner, repo, issue, state, outbox FROM runs WHERE id = $1`, id).Scan(
		&r.InstallationID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.State, &raw)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the outbox of run %d: %w", id, err)
	}
	if raw == nil {
		return r, nil, nil
	}
	o := &outbox{}
	if err := json.Unmarshal(raw, o); err != nil {
		return nil, nil, fmt.Errorf("reading the outbox of run %d: %w", id, err)
	}
	return r, o, nil
}

// laterRun reports whether a run newer than run id exists on the same issue.
func (s *Store) laterRun(ctx context.Context, id, repoID int64, issue int) (bool, error) {
	var later bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE repo_id = $1 AND issue = $2 AND id > $3)`,
		repoID, issue, id).Scan(&later)
	if err != nil {
		return false, fmt.Errorf("looking for a later run on the issue: %w", err)
	}
	return later, nil
}
