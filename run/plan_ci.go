package run

import (
	"context"
	"fmt"

	"github.com/frognano/frognano/settings"
)

// ciPlan is a CI follow-up: the repository's CI (another App's check suite) failed on the head
// of a frognano pull request. No person asked, so nobody's permission is checked; instead at
// most Config.CIFollowUps of them start per pull request, and only while the failed commit is
// the head. Its task carries what failed (RenderFailedChecks).
type ciPlan struct{ pull }

func (p *ciPlan) admit(ctx context.Context, a *attempt) (bool, error) {
	r := a.run
	if a.settings.CIFeedback != nil && !*a.settings.CIFeedback {
		a.log.InfoContext(ctx, "CI feedback is off in the repository's settings")
		return false, a.skip(ctx, "", "CI feedback is off in the repository's "+settings.Path)
	}
	// The limit keeps a follow-up whose commit fails CI again from starting another, beyond it.
	if limit, n, err := a.ciBudget(ctx); err != nil {
		return false, err
	} else if n >= limit {
		a.log.InfoContext(ctx, "CI follow-ups of this pull request are used up", "limit", limit)
		return false, a.skip(ctx, "", fmt.Sprintf("CI follow-up limit (%d) reached", limit))
	}
	if ok, err := p.read(ctx, a); err != nil || !ok {
		return false, err
	}
	if p.pr.HeadSHA != r.CISHA && !r.AgentDone {
		a.log.InfoContext(ctx, "CI failed on a commit that is no longer the head; nothing to do", "ci_sha", r.CISHA, "head", p.pr.HeadSHA)
		return false, a.skip(ctx, "", "CI failed on an earlier commit")
	}
	return true, p.readSource(ctx, a)
}

// note says what the run answers, for its reply.
func (p *ciPlan) note(a *attempt) string {
	return ciFollowUpNote(a.run.CISHA)
}

func (p *ciPlan) task(ctx context.Context, a *attempt) (string, bool, error) {
	return p.taskFor(ctx, a, "The repository's CI (not a person)")
}

func (p *ciPlan) publish(ctx context.Context, a *attempt, dir string) error {
	return p.publishWith(ctx, a, dir, func(note string) string { return ciNote(a.run.CISHA, note) })
}

// ciBudget returns the CI follow-up limit and how many CI follow-ups of this pull request
// started before this one (skipped ones do not count).
func (a *attempt) ciBudget(ctx context.Context) (limit, used int, err error) {
	limit = a.p.cfg.CIFollowUps
	if limit == 0 {
		limit = DefaultCIFollowUps
	}
	if limit < 0 {
		return 0, 0, nil
	}
	used, err = a.st.ciUsed(ctx, a.run)
	if err != nil {
		return 0, 0, err
	}
	return limit, used, nil
}
