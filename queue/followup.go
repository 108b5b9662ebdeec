package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/runner"
)

// Run kinds, as stored in runs.kind.
const (
	KindIssue    = "issue"    // a labelled issue
	KindFollowUp = "followup" // a reviewer's request on a frognano pull request
	KindCI       = "ci"       // the repository's CI failed on a frognano pull request's head
)

// DefaultCIFollowUps is how many follow-ups failed CI may start on one pull request.
const DefaultCIFollowUps = 1

// issueBranch matches the branches frognano pushes (BranchName).
var issueBranch = regexp.MustCompile(`^frognano/issue-([1-9][0-9]{0,9})$`)

// followUp is one attempt at a follow-up run: a writer's request on a frognano pull request
// becomes a new commit on its branch. The request reaches the model only after the
// requester's permission was checked; the branch is never force-pushed.
func (a *attempt) followUp(ctx context.Context) error {
	r, repo := a.run, a.repo
	if r.Kind == KindCI {
		// No person asked: the request is CI's report, and the limit keeps a follow-up whose
		// commit fails CI again from starting another, beyond it.
		if limit, n, err := a.ciBudget(ctx); err != nil {
			return err
		} else if n >= limit {
			a.log.InfoContext(ctx, "CI follow-ups of this pull request are used up", "limit", limit)
			_, err := a.st.finish(ctx, r.ID, StateSkipped, "", fmt.Sprintf("CI follow-up limit (%d) reached", limit), "", 0)
			return err
		}
	} else {
		if strings.HasSuffix(r.Labeler, "[bot]") { // the server drops bots; this is the second wall
			_, err := a.st.finish(ctx, r.ID, StateSkipped, "permission", "requests from bots are ignored", "", 0)
			return err
		}
		perm, err := repo.Permission(ctx, r.Labeler)
		if err != nil {
			return fmt.Errorf("checking permission of %s: %w", r.Labeler, err)
		}
		if !allowedPermissions[perm] {
			if err := a.deny(ctx, perm); err != nil {
				return err
			}
			return a.sayWhatWaited(ctx)
		}
	}
	pr, err := repo.PullRequest(ctx, r.Issue)
	if err != nil {
		return fmt.Errorf("reading pull request: %w", err)
	}
	m := issueBranch.FindStringSubmatch(pr.HeadRef)
	// The head must be this repository, by id: a fork's name, or a name this repository had,
	// is not.
	if m == nil || pr.HeadRepoID != r.RepoID {
		a.log.InfoContext(ctx, "not a frognano pull request; nothing to do", "head", pr.HeadRef)
		_, err := a.st.finish(ctx, r.ID, StateSkipped, "", "not a frognano pull request", "", 0)
		return err
	}
	issue, _ := strconv.Atoi(m[1])
	if r.Kind == KindCI && pr.HeadSHA != r.CISHA && !r.AgentDone {
		a.log.InfoContext(ctx, "CI failed on a commit that is no longer the head; nothing to do", "ci_sha", r.CISHA, "head", pr.HeadSHA)
		_, err := a.st.finish(ctx, r.ID, StateSkipped, "", "CI failed on an earlier commit", "", 0)
		return err
	}
	source, err := a.st.sourceID(ctx, r.ID)
	if err != nil {
		return err
	}
	if source != 0 && r.Kind == KindFollowUp {
		// A review and each of its line comments arrive as separate events: one run per review.
		if earlier, err := a.st.earlierRunOfSource(ctx, r, source); err != nil {
			return err
		} else if earlier != 0 {
			a.log.InfoContext(ctx, "this review already started a run; nothing to do", "earlier_run", earlier)
			_, err := a.st.finish(ctx, r.ID, StateSkipped, "", fmt.Sprintf("review already handled by run %d", earlier), "", 0)
			return err
		}
	}

	// The run goes ahead: requests on the pull request from now on are counted on it and, when
	// it is itself a request that waited, so are the others still waiting (waiting.go).
	if err := a.st.pass(ctx, r); err != nil {
		return err
	}

	// The reply to the request, edited as the run goes, like an issue's status comment.
	if r.CommentID == 0 {
		id, err := repo.Comment(ctx, r.Issue, renderStatus(a.view(StateRunning, a.followUpNote())))
		if err != nil {
			return fmt.Errorf("replying to the request: %w", err)
		}
		r.CommentID = id
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	a.status = newStatusComment(repo, r.CommentID, a.w.cfg.StatusEditInterval, a.log, func(p Progress) statusView {
		v := a.view(StateRunning, a.followUpNote())
		v.Progress = &p
		return v
	})
	if pr.State != "open" {
		return a.end(ctx, StateSkipped, "", "The pull request is closed; nothing was done.", "", 0)
	}

	title, body, _, err := repo.Issue(ctx, issue)
	if err != nil {
		return fmt.Errorf("reading issue #%d: %w", issue, err)
	}
	earlier, err := a.st.earlierRuns(ctx, r, issue)
	if err != nil {
		return err
	}
	title = strings.Join(strings.Fields(SanitizeIssueText(title)), " ")
	asker := r.Labeler
	if r.Kind == KindCI {
		asker = "The repository's CI (not a person)"
	}
	details := ""
	if !r.AgentDone {
		if details, err = a.followUpContext(ctx, source, r.CISHA); fault.IsTransient(err) {
			return err
		} else if err != nil {
			a.log.WarnContext(ctx, "reading the request's details", "error", githubapp.Redact(err.Error()))
			details = "(The details of this request could not be read from GitHub: " + oneLine(err.Error(), 300) + ".)\n"
		}
	}
	task := FollowUpTask(title, SanitizeIssueText(body), earlier, asker, SanitizeIssueText(r.Request), details)

	dir, err := os.MkdirTemp(a.w.cfg.WorkDir, "frognano-run-*")
	if err != nil {
		return fmt.Errorf("creating clone directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			a.log.WarnContext(ctx, "removing clone directory", "error", err)
		}
	}()
	headSHA, baseSHA, err := repo.CloneBranch(ctx, dir, pr.HeadRef, pr.BaseRef)
	if err != nil {
		return fmt.Errorf("cloning the pull request's branch: %w", err)
	}
	if !r.AgentDone {
		if err := a.runAgent(ctx, headSHA, pr.BaseRef, RunSpec{RunID: r.ID, RepoDir: dir, Task: task, Owner: r.Owner, Repo: r.Repo,
			InstallationID: r.InstallationID, RepoID: r.RepoID,
			Issue: issue, SetupCommit: baseSHA}); err != nil {
			return err
		}
	}
	if state, _, err := a.st.state(ctx, r.ID); err != nil {
		return err
	} else if state == StateCancelled {
		return errRunCancelled
	}
	if len(r.Patch) == 0 {
		return a.end(ctx, StateFailed, r.ExitReason, a.ciNote("The agent finished without changing any file, so nothing was pushed."), "", 0)
	}
	url, number, err := repo.Publish(ctx, githubapp.PublishInput{
		Dir: dir, BaseSHA: r.BaseSHA, Branch: pr.HeadRef, BaseBranch: pr.BaseRef, FastForward: true,
		Title:         pr.Title,
		Body:          followUpBody(pr.Body, r),
		CommitMessage: followUpMessage(issue, r),
		Patch:         r.Patch, IssueNumber: issue, Check: r.Check, PullRequest: r.Issue,
	})
	if errors.Is(err, githubapp.ErrPullRequestClosed) {
		return a.end(ctx, StateSkipped, r.ExitReason, a.ciNote("The pull request was closed while the run worked, so nothing was pushed."), "", 0)
	}
	if errors.Is(err, githubapp.ErrBranchMoved) {
		note := "Someone pushed to this pull request's branch while the run worked, so nothing was pushed " +
			"(frognano never overwrites a reviewer's commits). Ask again to start from the branch's new head."
		return a.end(ctx, StateFailed, r.ExitReason, a.ciNote(note), "", 0)
	}
	if err != nil {
		return fmt.Errorf("publishing the follow-up commit: %w", err)
	}
	r.Headline = a.ciNote(r.Headline) // the final reply shows the headline as its note
	return a.end(ctx, StateSucceeded, r.ExitReason, "", url, number)
}

// sayWhatWaited tells the pull request that requests counted on a refused run were not run.
// Until the worker refuses a request from someone who may not write, it is the pull request's
// active run (or a run waiting for it). A writer's request or CI's failure that comes meanwhile
// waits as a run of its own and runs after it (waiting.go), but only MaxWaitingRuns of them do,
// and a person waits with one request at a time: a request beyond that is counted on the active
// run or on its author's waiting run, and without this the refusal (addressed perhaps to
// someone else) would be all anyone heard of it. The run is finished, so nothing more is
// counted on it.
func (a *attempt) sayWhatWaited(ctx context.Context) error {
	var n int
	if err := a.st.pool.QueryRow(ctx, `SELECT extra_requests FROM runs WHERE id = $1`, a.run.ID).Scan(&n); err != nil {
		return fmt.Errorf("reading the requests counted on run %d: %w", a.run.ID, err)
	}
	if n <= 0 {
		return nil
	}
	them := "it was"
	if n > 1 {
		them = "they were"
	}
	body := fmt.Sprintf("%s on this pull request were counted on the request above instead of waiting their turn "+
		"(one person waits with one request at a time, and at most %d wait); %s not run. Ask again to start a follow-up.",
		plural(n, "more request"), MaxWaitingRuns, them)
	if _, err := a.repo.Comment(ctx, a.run.Issue, body); err != nil {
		// The run is finished and a retry would not come back here: say it in the log.
		a.log.WarnContext(ctx, "telling that requests waited on a refused run", "requests", n, "error", githubapp.Redact(err.Error()))
	}
	return nil
}

// ciNote keeps saying, in a CI follow-up's final reply, that CI triggered it.
func (a *attempt) ciNote(note string) string {
	if a.run.Kind != KindCI {
		return note
	}
	return strings.TrimSpace(fmt.Sprintf("Triggered by CI: the repository's checks failed on %s. %s", runner.CodeSpan(a.run.CISHA, 64), note))
}

// ciBudget returns the CI follow-up limit and how many CI follow-ups of this pull request
// started before this one (skipped ones do not count).
func (a *attempt) ciBudget(ctx context.Context) (limit, used int, err error) {
	limit = a.w.cfg.CIFollowUps
	if limit == 0 {
		limit = DefaultCIFollowUps
	}
	if limit < 0 {
		return 0, 0, nil
	}
	r := a.run
	// By the repository's id: a rename does not reset the budget, and a new repository of an
	// old name does not inherit another's count.
	err = a.st.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE repo_id = $1 AND issue = $2
		AND kind = 'ci' AND id < $3 AND state <> 'skipped'`, r.RepoID, r.Issue, r.ID).Scan(&used)
	if err != nil {
		return 0, 0, fmt.Errorf("counting CI follow-ups: %w", err)
	}
	return limit, used, nil
}

// followUpNote says what the run answers, for its status comment.
func (a *attempt) followUpNote() string {
	r := a.run
	if r.Kind == KindCI {
		return fmt.Sprintf("Follow-up run triggered by CI: the repository's checks failed on %s, the head of this pull request. "+
			"It pushes a new commit on this branch; CI may start at most this many such runs per pull request (`FROGNANO_CI_FOLLOWUPS`).", runner.CodeSpan(r.CISHA, 64))
	}
	where := "a comment"
	if r.RequestURL != "" {
		where = "[a comment](" + r.RequestURL + ")"
	}
	return fmt.Sprintf("Follow-up run for %s by @%s: a new commit on this pull request's branch.", where, r.Labeler)
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

// followUpBody is the pull request's body with a section for this run, within GitHub's limit:
// the runner's whole report when it fits, else its headline.
func followUpBody(current string, r *run) string {
	head := fmt.Sprintf("\n\n---\n\n## Follow-up run %d\n\nRequested by @%s", r.ID, r.Labeler)
	if r.Kind == KindCI {
		head = fmt.Sprintf("\n\n---\n\n## Follow-up run %d\n\nTriggered by the repository's failed CI on %s", r.ID, runner.CodeSpan(r.CISHA, 64))
	}
	if r.RequestURL != "" {
		head += " in " + r.RequestURL
	}
	head += ".\n\n"
	for _, section := range []string{head + r.PRBody, head + r.Headline, head} {
		if body := current + section; utf8.RuneCountInString(githubapp.Redact(body)) <= runner.GitHubBodyLimit {
			return body
		}
	}
	room := runner.GitHubBodyLimit - utf8.RuneCountInString(head) - 200
	cut, _ := clip.Runes(current, max(room, 0))
	return cut + head
}

func followUpMessage(issue int, r *run) string {
	if r.Kind == KindCI {
		return fmt.Sprintf("Follow-up on #%d after CI failed on %s\n\nWritten by frognano run %d.", issue, clip.Prefix(r.CISHA, 64), r.ID)
	}
	return fmt.Sprintf("Follow-up on #%d at @%s's request\n\nWritten by frognano run %d.", issue, r.Labeler, r.ID)
}
