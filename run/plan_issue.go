package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
)

// issuePlan is a labelled issue's run: the task is the issue, the clone its repository's
// default branch, and what it publishes a draft pull request on the issue's own branch
// (BranchName), opened or updated.
type issuePlan struct {
	title string // the issue's title, sanitized: the pull request's and the commit's
}

// admit: only people who may write can start a run, or a live API token (an operator's
// credential: no person's permission applies; its scope was checked when it asked, its
// liveness before anything else (attempt.do, admitToken)).
func (p *issuePlan) admit(ctx context.Context, a *attempt) (bool, error) {
	r := a.run
	if r.Trigger == TriggerAPI {
		return true, nil
	}
	perm, err := a.repo.Permission(ctx, r.Labeler)
	if err != nil {
		return false, fmt.Errorf("checking permission of %s: %w", r.Labeler, err)
	}
	if ok, err := a.mayTrigger(ctx, r.Labeler, perm); err != nil {
		return false, err
	} else if !ok {
		return false, a.deny(ctx, perm)
	}
	return true, nil
}

// admitToken lets a run asked through the API go ahead only while its token is live: a token
// revoked after it asked, and a run that claims the API without a token, are skipped with no
// comment (nobody on GitHub asked).
func (a *attempt) admitToken(ctx context.Context) (bool, error) {
	r := a.run
	if r.TokenID == 0 {
		return false, a.skip(ctx, "token", "asked through the API without a token")
	}
	live, err := a.st.tokenLive(ctx, r.TokenID)
	if err != nil {
		return false, err
	}
	if !live {
		a.log.InfoContext(ctx, "the API token that asked for the run is revoked", "token_id", r.TokenID)
		return false, a.skip(ctx, "token", fmt.Sprintf("API token %d was revoked before the run started", r.TokenID))
	}
	return true, nil
}

// greet reacts and posts the status comment, or, on a retry, says which attempt this is.
func (p *issuePlan) greet(ctx context.Context, a *attempt) error {
	r, repo := a.run, a.repo
	if r.CommentID != 0 {
		if err := repo.EditComment(ctx, r.CommentID, RenderStatus(a.view(StateRunning, noteAttempt(a.try.Attempt, a.try.MaxAttempts)))); err != nil {
			return fmt.Errorf("editing status comment: %w", err)
		}
		return nil
	}
	if err := repo.React(ctx, r.Issue, "eyes"); err != nil {
		return fmt.Errorf("reacting to issue: %w", err)
	}
	id, err := repo.Comment(ctx, r.Issue, RenderStatus(a.view(StateRunning, noteStarting)))
	if err != nil {
		return fmt.Errorf("posting status comment: %w", err)
	}
	r.CommentID = id
	return a.st.setComment(ctx, r.ID, id)
}

func (p *issuePlan) note(*attempt) string { return "" }

func (p *issuePlan) cancelled() string { return noteIssueCancelled }

// task is the issue's title and body as a human sees them on GitHub.
func (p *issuePlan) task(ctx context.Context, a *attempt) (string, bool, error) {
	title, body, state, err := a.repo.Issue(ctx, a.run.Issue)
	if err != nil {
		return "", false, fmt.Errorf("reading issue: %w", err)
	}
	if state == "closed" {
		return "", false, a.end(ctx, StateSkipped, "", noteIssueClosed, "", 0)
	}
	p.title = strings.Join(strings.Fields(SanitizeIssueText(title)), " ")
	return p.title + "\n\n" + SanitizeIssueText(body), true, nil
}

// clone clones the default branch; the pull request body says what the run skips (notices).
func (p *issuePlan) clone(ctx context.Context, a *attempt, spec *RunSpec) (string, string, error) {
	headSHA, defaultBranch, err := a.repo.Clone(ctx, spec.RepoDir)
	if err != nil {
		return "", "", fmt.Errorf("cloning repository: %w", err)
	}
	spec.Issue, spec.Notices = a.run.Issue, a.notices()
	return headSHA, defaultBranch, nil
}

// publish opens (or updates) the issue's draft pull request with the patch.
func (p *issuePlan) publish(ctx context.Context, a *attempt, dir string) error {
	r := a.run
	if r.ExitReason == runner.ExitSetupFailed {
		return a.end(ctx, StateFailed, r.ExitReason, noteSetupFailed(r.ID), "", 0)
	}
	if r.ExitReason == runner.ExitEnvironmentRefused {
		return a.end(ctx, StateFailed, r.ExitReason, noteEnvironmentRefused(r.ID), "", 0)
	}
	if len(r.Patch) == 0 {
		return a.end(ctx, StateFailed, r.ExitReason, noPatchNote(r, soNoPullRequest), "", 0)
	}
	if file, pattern, ok := a.protectedPath(r.Patch); ok {
		r.ExitReason = ExitProtectedPath
		return a.end(ctx, StateFailed, ExitProtectedPath, noteProtectedPath(file, pattern), "", 0)
	}
	a.p.step(ctx, r.ID, StepPublishing)
	url, number, err := a.repo.Publish(ctx, a.pullRequestSettings(githubapp.PublishInput{
		Dir: dir, BaseSHA: r.BaseSHA, Branch: BranchName(r.Issue), BaseBranch: r.BaseBranch,
		Title:         issueTitle(p.title),
		Body:          issueBody(r.PRBody, r.Issue),
		CommitMessage: issueCommitMessage(r.Issue, p.title, r.ID),
		Patch:         r.Patch, IssueNumber: r.Issue,
		Check: r.Check,
		// The labeller is credited in the commit and asked to review (issue 22).
		CoAuthor: githubapp.Person{Login: r.Labeler},
	}))
	if err != nil {
		return fmt.Errorf("publishing pull request: %w", err)
	}
	a.p.step(ctx, r.ID, StepPublished)
	return a.end(ctx, StateSucceeded, r.ExitReason, "", url, number)
}
