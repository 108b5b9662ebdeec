package run

import (
	"context"
	"fmt"
	"github.com/frognano/frognano/githubapp"
	"strings"

	"github.com/frognano/frognano/internal/fault"
)

// This file holds what is said of runs that ended with no attempt of theirs to say it: a run
// cancelled while it waited for a retry, one the queue's cleanup ended because its job had
// ended without it, and the runs a stop request stopped.

// DeadRunNote is the status comment's note of a run the queue's cleanup ended because its
// job had ended without ending it (queue/waiting.go endDead).
const DeadRunNote = "This run's worker stopped without finishing it (it died on its last try, or could not record the end). " +
	"It was ended so that the requests waiting behind it could run; ask again to retry it."

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
		note = "The label was removed or the issue was closed."
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

// StopReply answers `@APP stop`: which runs were stopped (active: queued or running; waiting:
// requests that waited for them), or that there was none.
func StopReply(requester string, active, waiting []int64) string {
	if len(active) == 0 && len(waiting) == 0 {
		return fmt.Sprintf("@%s: there is no waiting, queued or running frognano follow-up on this pull request, so there was nothing to stop.", requester)
	}
	names := func(ids []int64) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = fmt.Sprintf("run %d", id)
		}
		return out
	}
	what := strings.Join(names(active), " and ")
	if len(waiting) > 0 {
		if what != "" {
			what += ", and "
		}
		what += fmt.Sprintf("%s that waited for %s (%s)", plural(len(waiting), "request"), pick(len(active) > 0, "it", "an earlier run"), strings.Join(names(waiting), ", "))
	}
	return fmt.Sprintf("🛑 @%s: frognano stopped %s at your request; nothing more will be pushed for it. "+
		"Ask again with a new comment when you want another follow-up.", requester, what)
}
