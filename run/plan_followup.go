package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/internal/logging"
)

// followUpPlan is a writer's request on a frognano pull request (an `@APP-SLUG ...` comment or a
// review that requests changes): a new commit on its branch. The request reaches the model
// only after the requester's permission was checked; its task carries the review's line
// comments (RenderReviewComments), the requester's own only.
type followUpPlan struct{ pull }

func (p *followUpPlan) admit(ctx context.Context, a *attempt) (bool, error) {
	r := a.run
	if strings.HasSuffix(r.Labeler, "[bot]") { // the server drops bots; this is the second wall
		return false, a.skip(ctx, "permission", "requests from bots are ignored")
	}
	perm, err := a.repo.Permission(ctx, r.Labeler)
	if err != nil {
		return false, fmt.Errorf("checking permission of %s: %w", r.Labeler, err)
	}
	if ok, err := a.mayTrigger(ctx, r.Labeler, perm); err != nil {
		return false, err
	} else if !ok {
		if err := a.deny(ctx, perm); err != nil {
			return false, err
		}
		return false, a.sayWhatWaited(ctx)
	}
	if a.settings.FollowUps != nil && !*a.settings.FollowUps {
		return false, a.followUpsOff(ctx)
	}
	// An option of the mention that cannot be used (ParsePullRequestOptions) is answered now
	// that the requester is known to be a writer; nothing starts.
	if oe := r.Asked.Refused; oe != nil {
		return false, a.refuseOption(ctx, oe)
	}
	if ok, err := p.read(ctx, a); err != nil || !ok {
		return false, err
	}
	if err := p.readSource(ctx, a); err != nil {
		return false, err
	}
	if p.source != 0 {
		// A review and each of its line comments arrive as separate events: one run per review.
		if earlier, err := a.st.earlierRunOfSource(ctx, r, p.source); err != nil {
			return false, err
		} else if earlier != 0 {
			a.log.InfoContext(ctx, "this review already started a run; nothing to do", "earlier_run", earlier)
			return false, a.skip(ctx, "", fmt.Sprintf("review already handled by run %d", earlier))
		}
	}
	return true, nil
}

// note says what the run answers, for its reply.
func (p *followUpPlan) note(a *attempt) string {
	return followUpNote(a.run.RequestURL, a.run.Labeler)
}

func (p *followUpPlan) task(ctx context.Context, a *attempt) (string, bool, error) {
	return p.taskFor(ctx, a, a.run.Labeler)
}

func (p *followUpPlan) publish(ctx context.Context, a *attempt, dir string) error {
	return p.publishWith(ctx, a, dir, func(note string) string { return note })
}

// sayWhatWaited tells the pull request that requests counted on a refused run were not run.
// Until the worker refuses a request from someone who may not write, it is the pull request's
// active run (or a run waiting for it). A writer's request or CI's failure that comes meanwhile
// waits as a run of its own and runs after it (queue/waiting.go), but only MaxWaitingRuns of
// them do, and a person waits with one request at a time: a request beyond that is counted on
// the active run or on its author's waiting run, and without this the refusal (addressed
// perhaps to someone else) would be all anyone heard of it. The run is finished, so nothing
// more is counted on it.
func (a *attempt) sayWhatWaited(ctx context.Context) error {
	n, err := a.st.extraRequests(ctx, a.run.ID)
	if err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	if _, err := a.repo.Comment(ctx, a.run.Issue, requestsNotRunReply(n)); err != nil {
		// The run is finished and a retry would not come back here: say it in the log.
		a.log.WarnContext(ctx, "telling that requests waited on a refused run", "requests", n, logging.Err(err))
	}
	return nil
}
