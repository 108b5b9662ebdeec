package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// pull is what both kinds of follow-up share (followUpPlan, ciPlan): the pull request they
// answer (runs.issue is its number), the issue its branch was made for when it is frognano's,
// its clone and the fast-forward commit they publish on it. A follow-up's requester is checked
// before anything of the request reaches the model, and its branch is never force-pushed.
type pull struct {
	pr githubapp.PullRequest
	// issue is the issue of a frognano pull request's branch (ParseBranch); 0: another pull
	// request of the repository (a writer's request only), whose own title and body are the task.
	issue  int
	source int64 // the review or check suite the request came from (runs.source_id; 0: none)
	// baseHead is the head of the pull request's base branch when clone fetched it: its
	// .gitleaks.toml (the maintainers') is the secrets check's allow-list, never the one on
	// frognano's branch, which an earlier run's patch could have written.
	baseHead string
}

// read reads the pull request; ok false: frognano may not work on it, and the run was skipped.
// A writer's request may be on any pull request whose branch is in this repository; one on a
// fork's is answered with why not. CI follow-ups are frognano's pull requests' only.
func (p *pull) read(ctx context.Context, a *attempt) (bool, error) {
	r := a.run
	pr, err := a.repo.PullRequest(ctx, r.Issue)
	if err != nil {
		return false, fmt.Errorf("reading pull request: %w", err)
	}
	issue, ours := ParseBranch(pr.HeadRef)
	// The head must be this repository, by id: a fork's name, or a name this repository had,
	// is not.
	switch {
	case pr.HeadRepoID != r.RepoID && r.Kind == KindFollowUp:
		a.log.InfoContext(ctx, "a request on a fork's pull request; nothing to do", "head", pr.HeadRef)
		return false, a.refuseFork(ctx, pr)
	case pr.HeadRepoID != r.RepoID || (!ours && r.Kind != KindFollowUp):
		a.log.InfoContext(ctx, "not a frognano pull request; nothing to do", "head", pr.HeadRef)
		return false, a.skip(ctx, "", "not a frognano pull request")
	case !ours:
		issue = 0
	}
	p.pr, p.issue = pr, issue
	return true, nil
}

// refuseFork answers a writer's request on a pull request from a fork with one comment: frognano
// pushes only to this repository's branches. No run starts.
func (a *attempt) refuseFork(ctx context.Context, pr githubapp.PullRequest) error {
	r := a.run
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, renderForkRefused(r.ID, r.Labeler, pr.HeadRepo))
		if err != nil {
			return fmt.Errorf("explaining the fork refusal: %w", err)
		}
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	return a.skip(ctx, "fork", "the pull request's branch is in a fork")
}

// readSource reads the request's source (runs.source_id).
func (p *pull) readSource(ctx context.Context, a *attempt) error {
	var err error
	p.source, err = a.st.sourceID(ctx, a.run.ID)
	return err
}

// greet posts the reply to the request; a retry keeps the one it has.
func (p *pull) greet(ctx context.Context, a *attempt) error {
	r := a.run
	if r.CommentID != 0 {
		return nil
	}
	id, err := a.repo.Comment(ctx, r.Issue, RenderStatus(a.view(StateRunning, a.plan.note(a))))
	if err != nil {
		return fmt.Errorf("replying to the request: %w", err)
	}
	r.CommentID = id
	return a.st.setComment(ctx, r.ID, id)
}

func (p *pull) cancelled() string { return notePullCancelled }

// taskFor is the follow-up's task: the issue (another pull request's own title and body), the
// earlier runs on the pull request, asker's request and its details (details; read only while the agent has not run yet).
func (p *pull) taskFor(ctx context.Context, a *attempt, asker string) (string, bool, error) {
	r := a.run
	if p.pr.State != "open" {
		return "", false, a.end(ctx, StateSkipped, "", notePullClosed(p.pr), "", 0)
	}
	title, body := p.pr.Title, p.pr.Body
	if p.issue != 0 {
		var err error
		if title, body, _, err = a.repo.Issue(ctx, p.issue); err != nil {
			return "", false, fmt.Errorf("reading issue #%d: %w", p.issue, err)
		}
	}
	earlier, err := a.st.earlierRuns(ctx, r, p.issue)
	if err != nil {
		return "", false, err
	}
	title = strings.Join(strings.Fields(SanitizeIssueText(title)), " ")
	details := ""
	if !r.AgentDone {
		if details, err = a.followUpContext(ctx, p.source, r.CISHA); fault.IsTransient(err) {
			return "", false, err
		} else if err != nil {
			a.log.WarnContext(ctx, "reading the request's details", logging.Err(err))
			details = "(The details of this request could not be read from GitHub: " + oneLine(err.Error(), 300) + ".)\n"
		}
	}
	return FollowUpTask(title, SanitizeIssueText(body), earlier, asker, SanitizeIssueText(r.Request), details), true, nil
}

// clone clones the pull request's branch with its base fetched: the agent works on the branch,
// and the environment is built from the base's head, so nothing committed on the pull request
// runs with network.
func (p *pull) clone(ctx context.Context, a *attempt, spec *RunSpec) (string, string, error) {
	// The environment and the checks' configuration come from the base: never from a branch a
	// patch wrote.
	if IsOwnBranch(p.pr.BaseRef) {
		if err := a.end(ctx, StateSkipped, "base_ours", noteBaseOurs(p.pr.BaseRef), "", 0); err != nil {
			return "", "", err
		}
		return "", "", errEnded
	}
	headSHA, baseSHA, err := a.repo.CloneBranch(ctx, spec.RepoDir, p.pr.HeadRef, p.pr.BaseRef)
	if err != nil {
		return "", "", fmt.Errorf("cloning the pull request's branch: %w", err)
	}
	spec.Issue, spec.SetupCommit, p.baseHead = p.issue, baseSHA, baseSHA
	return headSHA, p.pr.BaseRef, nil
}

// publishWith pushes the patch as a new commit on the head the run started from, never with
// force, to the pull request while it is open; say words each note of the final reply.
func (p *pull) publishWith(ctx context.Context, a *attempt, dir string, say func(string) string) error {
	r := a.run
	if len(r.Patch) == 0 {
		return a.end(ctx, StateFailed, r.ExitReason, say(noPatchNote(r, soNothingPushed)), "", 0)
	}
	if file, pattern, ok := a.protectedPath(ctx, dir, r.Patch); ok {
		r.ExitReason = ExitProtectedPath
		return a.end(ctx, StateFailed, ExitProtectedPath, say(noteProtectedPath(file, pattern)), "", 0)
	}
	a.p.step(ctx, r.ID, StepPublishing)
	pub, err := a.repo.Publish(ctx, githubapp.PublishInput{
		Dir: dir, BaseSHA: r.BaseSHA, Branch: p.pr.HeadRef, BaseBranch: p.pr.BaseRef, FastForward: true,
		Title:         p.pr.Title,
		Body:          followUpBody(p.pr.Body, r),
		CommitMessage: followUpMessage(cmp.Or(p.issue, r.Issue), r),
		Patch:         r.Patch, IssueNumber: p.issue, Check: r.Check, PullRequest: r.Issue,
		AllowListAt: p.baseHead, CoAuthor: requester(r),
	})
	if errors.Is(err, githubapp.ErrPullRequestClosed) {
		// Read it again to say why, when it can be told: its branch was deleted.
		pr, rerr := a.repo.PullRequest(ctx, r.Issue)
		if rerr != nil {
			a.log.WarnContext(ctx, "reading the closed pull request", logging.Err(rerr))
			pr = githubapp.PullRequest{}
		}
		return a.end(ctx, StateSkipped, r.ExitReason, say(notePullClosedWhileWorking(pr)), "", 0)
	}
	if errors.Is(err, githubapp.ErrBranchMoved) {
		return a.end(ctx, StateFailed, r.ExitReason, say(noteBranchMoved), "", 0)
	}
	if err != nil {
		return fmt.Errorf("publishing the follow-up commit: %w", err)
	}
	a.p.step(ctx, r.ID, StepPublished)
	r.Headline = say(r.Headline) // the final reply shows the headline as its note
	a.published = &Publication{RunID: r.ID, Number: pub.Number, Ours: p.issue != 0, Issue: p.issue, Head: pub.Head, Commits: pub.Commits}
	return a.end(ctx, StateSucceeded, r.ExitReason, "", pub.URL, pub.Number)
}

// requester is who asked for a follow-up, credited in its commit and asked to review: nobody
// for a run the repository's failed CI started (its "labeller" is the CI App).
func requester(r *row) githubapp.Person {
	if r.Kind == KindCI {
		return githubapp.Person{}
	}
	return githubapp.Person{Login: r.Labeler}
}

// FollowUpTask is the model's task for a follow-up: the original issue, what the earlier runs
// on the pull request did, the reviewer's request and its details (a review's line comments,
// what failed in CI: RenderReviewComments, RenderFailedChecks; "" none). Every argument is
// sanitized text.
func FollowUpTask(title, body string, earlier []string, reviewer, request, details string) string {
	var b strings.Builder
	b.WriteString(title + "\n\n" + strings.TrimSpace(body) + "\n\n")
	b.WriteString("## Earlier work on this pull request\n\n")
	b.WriteString("The checkout is the pull request's branch: it already holds the changes made so far.\n")
	for _, e := range earlier {
		b.WriteString("- " + e + "\n")
	}
	fmt.Fprintf(&b, "\n## The reviewer's request\n\n%s asks:\n\n%s\n", reviewer, strings.TrimSpace(request))
	if details != "" {
		b.WriteString("\n" + details)
	}
	return b.String()
}
