package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/runner"
)

// issuePlan is an issue's run, asked for by its label, a mention of the App on it or the API:
// the task is the issue (and the requester's instructions, if any), the clone its repository's
// default branch (or the base branch asked for), and what it publishes a draft pull request on
// the issue's own branch (BranchName), opened or updated.
type issuePlan struct {
	title string // the issue's title, sanitized: the pull request's and the commit's
	// instructions are what the requester added to the task (a mention's text after its
	// options), sanitized; "": none. They are read only once the requester may write.
	instructions string
}

// admit: only people who may write can start a run, or a live API token (an operator's
// credential: no person's permission applies; its scope was checked when it asked, its
// liveness before anything else (attempt.do, admitToken)); a mention's options must all be
// good. The requester's instructions (a mention's text after its options, or the API's) are
// kept for the task.
func (p *issuePlan) admit(ctx context.Context, a *attempt) (bool, error) {
	r := a.run
	if r.Trigger == TriggerMention && strings.HasSuffix(r.Labeler, "[bot]") { // the server drops bots; this is the second wall
		return false, a.skip(ctx, "permission", "requests from bots are ignored")
	}
	if r.Trigger != TriggerAPI {
		perm, err := a.repo.Permission(ctx, r.Labeler)
		if err != nil {
			return false, fmt.Errorf("checking permission of %s: %w", r.Labeler, err)
		}
		if ok, err := a.mayTrigger(ctx, r.Labeler, perm); err != nil {
			return false, err
		} else if !ok {
			return false, a.deny(ctx, perm)
		}
	}
	request := SanitizeIssueText(r.Request)
	if r.Trigger == TriggerMention {
		// The server parsed the same text for r.Asked; an option it could not parse is
		// answered here, now that the requester is known to be a writer.
		_, rest, err := ParseOptions(request)
		if oe := (*OptionError)(nil); errors.As(err, &oe) {
			return false, a.refuseOption(ctx, oe)
		} else if err != nil {
			return false, err
		}
		request = rest
	}
	p.instructions = clip.Bytes(strings.TrimSpace(request), maxInstructionBytes)
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

// maxInstructionBytes bounds the requester's instructions in the task.
const maxInstructionBytes = 16 << 10

// refuseOption answers a request whose option oe cannot be used with one comment naming it;
// no run starts.
func (a *attempt) refuseOption(ctx context.Context, oe *OptionError) error {
	r := a.run
	a.log.InfoContext(ctx, "request refused for an option", "option", oe.Name, "reason", oe.Reason)
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, renderOptionRefused(r.ID, r.Labeler, oe))
		if err != nil {
			return fmt.Errorf("explaining the option refusal: %w", err)
		}
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	return a.skip(ctx, "option", oe.Error())
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
	return IssueTask(p.title, SanitizeIssueText(body), a.run.Labeler, p.instructions), true, nil
}

// IssueTask is the model's task for an issue: its title and body and, when the requester added
// some (a mention's text), their instructions, fenced. Every argument is sanitized text.
func IssueTask(title, body, requester, instructions string) string {
	task := title + "\n\n" + body
	if instructions != "" {
		task = strings.TrimRight(task, "\n") + "\n\n## The requester's instructions\n\n" +
			requester + " asked for this run and adds:\n\n" + fence(instructions, "text")
	}
	return task
}

// clone clones the default branch, or the base branch the requester asked for (Options.Base)
// or the repository's settings name (base_branch): a branch that is not there ends the run,
// saying so; the pull request body says what the run
// skips (notices).
func (p *issuePlan) clone(ctx context.Context, a *attempt, spec *RunSpec) (string, string, error) {
	spec.Issue, spec.Notices = a.run.Issue, a.notices()
	base := a.run.Asked.Base // asked at trigger, else the repository's settings
	if base == "" && a.settings.BaseBranch != nil {
		base = *a.settings.BaseBranch
	}
	if base != "" && IsOwnBranch(base) {
		if err := a.end(ctx, StateSkipped, "base_ours", noteBaseOurs(base), "", 0); err != nil {
			return "", "", err
		}
		return "", "", errEnded
	}
	if base != "" {
		headSHA, _, err := a.repo.CloneBranch(ctx, spec.RepoDir, base, base)
		if gone := (*githubapp.BranchGoneError)(nil); errors.As(err, &gone) {
			if err := a.end(ctx, StateSkipped, "base_missing", noteBaseMissing(base), "", 0); err != nil {
				return "", "", err
			}
			return "", "", errEnded
		}
		if err != nil {
			return "", "", fmt.Errorf("cloning branch %s: %w", base, err)
		}
		return headSHA, base, nil
	}
	headSHA, defaultBranch, err := a.repo.Clone(ctx, spec.RepoDir)
	if err != nil {
		return "", "", fmt.Errorf("cloning repository: %w", err)
	}
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
	if file, pattern, ok := a.protectedPath(ctx, dir, r.Patch); ok {
		r.ExitReason = ExitProtectedPath
		return a.end(ctx, StateFailed, ExitProtectedPath, noteProtectedPath(file, pattern), "", 0)
	}
	a.p.step(ctx, r.ID, StepPublishing)
	pub, err := a.repo.Publish(ctx, a.pullRequestSettings(githubapp.PublishInput{
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
	a.published = &Publication{RunID: r.ID, Number: pub.Number, Ours: true, Issue: r.Issue, Head: pub.Head, Commits: pub.Commits}
	return a.end(ctx, StateSucceeded, r.ExitReason, "", pub.URL, pub.Number)
}
