package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/check/patch"
	secretscan "github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// PublishInput is one run's result to publish.
type PublishInput struct {
	Dir           string // the host's own clone made by Clone; never a sandbox's .git
	BaseSHA       string // commit the patch applies to
	Branch        string // e.g. "frognano/issue-12"; must not be BaseBranch
	BaseBranch    string // the PR's base, usually the default branch
	Title, Body   string // the PR's; redacted before use
	CommitMessage string // default: Title; "#<IssueNumber>" is added when missing
	Patch         []byte // already sanitized by the caller; applied with `git apply --cached`
	IssueNumber   int
	// FastForward moves Branch without force: the commit's parent is BaseSHA, and when Branch
	// no longer points there (someone pushed meanwhile) nothing is written and Publish returns
	// ErrBranchMoved instead of overwriting their commits. Follow-up runs set it.
	FastForward bool
	// PullRequest, when set (a follow-up), is the pull request Branch belongs to: Publish
	// pushes only while it is open (else ErrPullRequestClosed, nothing pushed) and updates it,
	// never opening another; a person who closed it meant it.
	PullRequest int
	// AllowListAt is the commit whose .gitleaks.toml lets known fixtures through the secrets
	// check (Config.Secrets): the base branch's head. Empty: BaseSHA for a new pull request,
	// which is the base branch's; none for a FastForward follow-up, whose BaseSHA is
	// frognano's own branch, which an earlier run's patch wrote.
	AllowListAt string
	// CoAuthor is who asked for the run (the labeller, or who asked for the follow-up): the
	// commit credits them (Co-authored-by) and they are asked to review the pull request.
	// Empty, or a bot: neither.
	CoAuthor Person
	// Labels are added to the pull request, and Reviewers (logins) and TeamReviewers (slugs
	// of the owner organisation's teams) asked to review it: what the repository's settings
	// file asks (pull_request). Each failure is logged: the pull request is what counts.
	Labels, Reviewers, TeamReviewers []string
	// Check, when set and the client reports check runs (ChecksOn), is reported on the
	// pushed commit once the pull request exists. A failure to report it is logged: the
	// pull request is what counts.
	Check *CheckRun
}

// Published is what Publish made: the pull request's address and number, and the commit it
// put at the head of the branch with the pull request's count of commits then (GitHub's, in
// its answer): package outcome counts the commits people push above it.
type Published struct {
	URL     string
	Number  int
	Head    string
	Commits int
}

// ErrPatchHoldsSecret: a file the patch would publish holds a secret frognano was given (a
// token, one of the operator's setup values: SecretMatcher), in any form secretform knows, so it
// is never pushed. The text never shows it.
var ErrPatchHoldsSecret = errors.New("the patch holds a value frognano keeps secret (a token or one of the operator's FROGNANO_SETUP_ENV values); it is never pushed")

// ErrBranchMoved: a follow-up's commit was not put on the branch because the branch moved
// (or was deleted) since BaseSHA.
var ErrBranchMoved = errors.New("the branch moved since the run started")

// ErrPullRequestClosed: a follow-up's pull request (PublishInput.PullRequest) was closed while
// the run worked; nothing was pushed.
var ErrPullRequestClosed = errors.New("the pull request was closed while the run worked")

var shaPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// Publish builds the tree of Patch on BaseSHA on the host and checks it, makes the commit on
// GitHub through its Git database API (signed by GitHub: no author or committer of its own
// unless the operator set FROGNANO_COMMIT_NAME/EMAIL), holding exactly that tree, moves Branch
// to it (created or replaced for a new pull request; only from BaseSHA, never forced, for a
// follow-up), then updates the open pull request whose head is Branch, or creates it as a
// DRAFT against BaseBranch, and asks CoAuthor to review it. It returns the PR's URL and
// number and the commit (Published). It never touches Dir's working tree or HEAD (the tree is built in a temporary
// index), never merges, approves or marks ready, and running it again after any failure
// updates the same PR with the same commit instead of opening a second one.
func (c *Client) Publish(ctx context.Context, in PublishInput) (Published, error) {
	if err := in.validate(); err != nil {
		return Published{}, fault.Permanent(fmt.Errorf("publishing to %s/%s: %w", c.owner, c.repo, err))
	}
	var existing *github.PullRequest
	if in.PullRequest != 0 {
		pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, in.PullRequest)
		if err != nil {
			return Published{}, mark(fmt.Errorf("reading pull request #%d on %s/%s: %w", in.PullRequest, c.owner, c.repo, err))
		}
		if pr.GetState() != "open" || pr.GetHead().GetRef() != in.Branch {
			return Published{}, fault.Permanent(fmt.Errorf("publishing to %s/%s: pull request #%d: %w", c.owner, c.repo, in.PullRequest, ErrPullRequestClosed))
		}
		existing = pr
	}
	bt, err := c.buildTree(ctx, in)
	if err != nil {
		return Published{}, mark(fmt.Errorf("publishing to %s/%s: %w", c.owner, c.repo, err))
	}
	message := withTrailer(commitMessage(in), c.coAuthorTrailer(ctx, in.CoAuthor))
	commit, err := c.publishCommit(ctx, in, bt, message)
	if err != nil {
		return Published{}, mark(fmt.Errorf("publishing to %s/%s: %w", c.owner, c.repo, err))
	}
	var pr *github.PullRequest
	if existing != nil {
		pr, err = c.updatePR(ctx, existing, Redact(in.Title), Redact(in.Body))
	} else {
		pr, err = c.upsertPR(ctx, in)
	}
	if err != nil {
		return Published{}, mark(fmt.Errorf("publishing pull request for %s on %s/%s: %w", in.Branch, c.owner, c.repo, err))
	}
	c.requestReview(ctx, pr, in.CoAuthor)
	c.decorate(ctx, pr, in)
	if in.Check != nil && c.ChecksOn() {
		if _, err := c.CreateCheckRun(ctx, commit, *in.Check); err != nil {
			c.log.WarnContext(ctx, "reporting the check run", "commit", commit, logging.Err(err))
		}
	}
	return Published{URL: pr.GetHTMLURL(), Number: pr.GetNumber(), Head: commit, Commits: pr.GetCommits()}, nil
}

func (in PublishInput) validate() error {
	switch {
	case in.Dir == "":
		return errors.New("no clone directory")
	case !shaPattern.MatchString(in.BaseSHA):
		return fmt.Errorf("base %q is not a full commit id", in.BaseSHA)
	case in.BaseBranch == "" || in.Branch == "":
		return errors.New("branch and base branch are required")
	case in.Branch == in.BaseBranch:
		return fmt.Errorf("refusing to push to the base branch %q", in.Branch)
	case !ValidBranch(in.Branch):
		return fmt.Errorf("branch %q is not a valid branch name", in.Branch)
	case strings.TrimSpace(in.Title) == "":
		return errors.New("pull request title is empty")
	case len(in.Patch) == 0:
		return errors.New("patch is empty")
	}
	return nil
}

// ValidBranch is a conservative subset of git check-ref-format: enough for names like
// "frognano/issue-12", and nothing that git could read as an option or a revision expression.
func ValidBranch(b string) bool {
	if strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "//") ||
		strings.Contains(b, "@{") || strings.HasSuffix(b, ".") {
		return false
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./", r)) {
			return false
		}
	}
	return true
}

func commitMessage(in PublishInput) string {
	msg := strings.TrimSpace(in.CommitMessage)
	if msg == "" {
		msg = strings.TrimSpace(in.Title)
	}
	if in.IssueNumber > 0 && !strings.Contains(msg, "#"+strconv.Itoa(in.IssueNumber)) {
		msg += fmt.Sprintf("\n\nIssue: #%d", in.IssueNumber)
	}
	return Redact(msg) + "\n"
}

// upsertPR finds the open PR for the branch before every attempt to create one, so neither a
// lost answer to POST /pulls nor a concurrent run can produce a second PR.
func (c *Client) upsertPR(ctx context.Context, in PublishInput) (*github.PullRequest, error) {
	title, body := Redact(in.Title), Redact(in.Body)
	for attempt := 0; ; attempt++ {
		pr, err := c.findPR(ctx, in.Branch)
		if err != nil {
			return nil, err
		}
		if pr != nil {
			return c.updatePR(ctx, pr, title, body)
		}
		pr, _, err = c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
			Title: github.String(title), Head: github.String(in.Branch), Base: github.String(in.BaseBranch),
			Body: github.String(body), Draft: github.Bool(true), MaintainerCanModify: github.Bool(false),
		})
		if err == nil {
			c.log.InfoContext(ctx, "created draft pull request", "number", pr.GetNumber(), "branch", in.Branch)
			return pr, nil
		}
		last := attempt >= c.app.cfg.MaxRetries
		switch {
		case prAlreadyExists(err) && !last:
			continue // someone else made it in between: the next findPR returns it
		case fault.IsTransient(mark(err)) && !last:
			c.log.WarnContext(ctx, "creating pull request failed, will look for it and retry", logging.Err(err))
			if err := c.app.cfg.Sleep(ctx, backoff(attempt)); err != nil {
				return nil, fmt.Errorf("waiting to retry creating the pull request: %w", err)
			}
		default:
			return nil, fmt.Errorf("creating pull request: %w", err)
		}
	}
}

func (c *Client) findPR(ctx context.Context, branch string) (*github.PullRequest, error) {
	prs, _, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, &github.PullRequestListOptions{
		State: "open", Head: c.owner + ":" + branch,
	})
	if err != nil {
		return nil, fmt.Errorf("listing pull requests for %s: %w", branch, err)
	}
	for _, pr := range prs {
		// The head filter is GitHub's; check it anyway, a PR from a fork must never be updated.
		if pr.GetHead().GetRef() == branch && pr.GetHead().GetRepo().GetFullName() == c.owner+"/"+c.repo {
			return pr, nil
		}
	}
	return nil, nil
}

func (c *Client) updatePR(ctx context.Context, pr *github.PullRequest, title, body string) (*github.PullRequest, error) {
	if pr.GetTitle() == title && pr.GetBody() == body {
		return pr, nil
	}
	// Only title and body: the draft flag and state are never touched.
	updated, _, err := c.gh.PullRequests.Edit(ctx, c.owner, c.repo, pr.GetNumber(), &github.PullRequest{
		Title: github.String(title), Body: github.String(body),
	})
	if err != nil {
		return nil, fmt.Errorf("updating pull request #%d: %w", pr.GetNumber(), err)
	}
	c.log.InfoContext(ctx, "updated pull request", "number", updated.GetNumber())
	return updated, nil
}

func prAlreadyExists(err error) bool {
	var respErr *github.ErrorResponse
	if !errors.As(err, &respErr) || respErr.Response == nil || respErr.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	if strings.Contains(respErr.Message, "already exists") {
		return true
	}
	for _, e := range respErr.Errors {
		if strings.Contains(e.Message, "already exists") {
			return true
		}
	}
	return false
}

// SecretsError refuses a patch in which check/secrets found what looks like a secret
// (Config.Secrets is Block). Its text names each finding by rule, file and line, never a value.
type SecretsError struct{ Findings []secretscan.Finding }

func (e *SecretsError) Error() string {
	return "the patch holds what looks like a secret (FROGNANO_SECRETS=block); it is never pushed: " + secretscan.List(e.Findings)
}

// checkSecrets is Publish's own secrets check, the runner's scan (check/secrets.Scan: every
// file the patch publishes, whole, with the base branch's allow rules) on the patch as Publish
// applies it: under Block, a finding or a scan that could not be done refuses the patch for
// good.
func (c *Client) checkSecrets(ctx context.Context, in PublishInput) error {
	if c.app.cfg.Secrets == secretscan.Warn {
		return nil
	}
	allowAt := in.AllowListAt
	if allowAt == "" && !in.FastForward {
		allowAt = in.BaseSHA
	}
	found, err := secretscan.Scan(ctx, patch.HostGit(in.Dir), secretscan.Input{Base: in.BaseSHA, Diff: in.Patch, AllowListAt: allowAt})
	if err != nil {
		return fault.Permanent(fmt.Errorf("scanning the patch for secrets: %w", err))
	}
	if len(found.Findings) > 0 {
		return fault.Permanent(&SecretsError{Findings: found.Findings})
	}
	return nil
}
