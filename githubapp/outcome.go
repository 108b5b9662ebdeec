package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// What package outcome asks GitHub about a pull request a run published to: its state
// (reconciliation), the pull request that replaced it, and how far the merged head is from
// frognano's (git on the host).

// PullState is a pull request's state as reconciliation reads it (GET /pulls/{number}).
type PullState struct {
	State              string // "open" or "closed"
	Merged             bool
	MergedBy           string // login
	MergeSHA           string
	MergedAt, ClosedAt time.Time
	Draft              bool
	HeadSHA            string
	Commits            int
	// RateRemaining is what GitHub's X-RateLimit-Remaining said with the answer; -1: nothing.
	RateRemaining int
}

// PullState reads pull request number (one API call).
func (c *Client) PullState(ctx context.Context, number int) (PullState, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return PullState{RateRemaining: remaining(resp)}, mark(fmt.Errorf("getting pull request %s/%s#%d: %w", c.owner, c.repo, number, err))
	}
	return PullState{
		State: pr.GetState(), Merged: pr.GetMerged(), MergedBy: pr.GetMergedBy().GetLogin(), MergeSHA: pr.GetMergeCommitSHA(),
		MergedAt: pr.GetMergedAt().Time, ClosedAt: pr.GetClosedAt().Time, Draft: pr.GetDraft(),
		HeadSHA: pr.GetHead().GetSHA(), Commits: pr.GetCommits(), RateRemaining: remaining(resp),
	}, nil
}

// remaining is the X-RateLimit-Remaining of resp, -1 when it has none.
func remaining(resp *github.Response) int {
	if resp == nil || resp.Response == nil || resp.Header.Get("X-RateLimit-Remaining") == "" {
		return -1
	}
	return resp.Rate.Remaining
}

// Gone reports whether err says that the repository or the pull request is not there any
// more for this installation: GitHub answered 404 or 410, or refused a token for a repository
// that "does not exist or is not accessible" (deleted, or taken out of the installation).
func Gone(err error) bool {
	if code := statusCode(err); code == http.StatusNotFound || code == http.StatusGone {
		return true
	}
	var refused *TokenRefusedError
	if errors.As(err, &refused) {
		switch refused.Status {
		case http.StatusNotFound, http.StatusGone:
			return true
		case http.StatusUnprocessableEntity:
			return strings.Contains(refused.Message, "does not exist or is not accessible")
		}
	}
	var tokenErr *ghinstallation.HTTPError
	if errors.As(err, &tokenErr) && tokenErr.Response != nil {
		switch tokenErr.Response.StatusCode {
		case http.StatusNotFound, http.StatusGone:
			return true
		}
	}
	return false
}

// MergedReplacement is the number of a merged pull request of this repository, not the App's,
// that GitHub links to issue (the issue's timeline: a cross-referenced event whose source is a
// pull request) and that was merged at or after since; 0: none. One API call (the first 100
// events of the timeline).
func (c *Client) MergedReplacement(ctx context.Context, issue int, since time.Time) (int, error) {
	events, _, err := c.gh.Issues.ListIssueTimeline(ctx, c.owner, c.repo, issue, &github.ListOptions{PerPage: 100})
	if err != nil {
		return 0, mark(fmt.Errorf("reading the timeline of %s/%s#%d: %w", c.owner, c.repo, issue, err))
	}
	for _, e := range events {
		src := e.GetSource()
		is := src.GetIssue()
		if e.GetEvent() != "cross-referenced" || is == nil || !is.IsPullRequest() {
			continue
		}
		merged := is.GetPullRequestLinks().GetMergedAt()
		if merged.IsZero() || merged.Before(since) || is.GetUser().GetType() == "Bot" {
			continue
		}
		if r := is.GetRepository(); r != nil && !strings.EqualFold(r.GetFullName(), c.owner+"/"+c.repo) {
			continue // another repository's pull request that mentions the issue
		}
		return is.GetNumber(), nil
	}
	return 0, nil
}

// ErrNotFetched: a commit PeopleLines was to compare is not in what the fetch of the pull
// request's head brought (frognano's head force-pushed over): the lines cannot be known, now
// or later.
var ErrNotFetched = errors.New("the commit is not in the pull request's head any more")

// PeopleLines fetches pull request number's head (refs/pull/N/head, which GitHub keeps after
// the branch is deleted) into a fresh repository of its own under dir (never checked out:
// no file of the repository is written or run) and counts the lines that differ between
// commit from (frognano's last head) and commit to (the head that was merged) in files:
// `git diff --numstat`, lines added plus removed; a binary file counts one. A commit the
// fetch did not bring (a head force-pushed over frognano's) is an error. The fetch is shallow,
// bounded to the commits since a day before since (when the pull request was opened; zero:
// the whole history), so that a repository's whole history is not downloaded at each merge:
// frognano's commits are newer, and a commit people dated earlier only cuts the history
// short (the lines are then not known: ErrNotFetched).
func (c *Client) PeopleLines(ctx context.Context, dir string, number int, from, to string, files []string, since time.Time) (int, error) {
	if !shaPattern.MatchString(from) || !shaPattern.MatchString(to) {
		return 0, fmt.Errorf("measuring pull request #%d: %q or %q is not a commit id", number, from, to)
	}
	if len(files) == 0 {
		return 0, nil
	}
	repo, err := os.MkdirTemp(dir, "frognano-measure-*")
	if err != nil {
		return 0, fmt.Errorf("measuring pull request #%d: %w", number, err)
	}
	defer os.RemoveAll(repo)
	repo, _ = filepath.Abs(repo)
	if _, err := c.git(ctx, gitRun{dir: repo, args: []string{"init", "--bare", "--quiet"}}); err != nil {
		return 0, fmt.Errorf("measuring pull request #%d: %w", number, err)
	}
	tok, err := c.token(ctx)
	if err != nil {
		return 0, mark(fmt.Errorf("measuring pull request #%d of %s/%s: %w", number, c.owner, c.repo, err))
	}
	ref := "refs/pull/" + strconv.Itoa(number) + "/head"
	fetchArgs := []string{"fetch", "--no-tags", "--quiet"}
	if !since.IsZero() {
		fetchArgs = append(fetchArgs, "--shallow-since="+since.Add(-24*time.Hour).UTC().Format(time.RFC3339))
	}
	fetchArgs = append(fetchArgs, "--", c.remote(), "+"+ref+":refs/frognano/head")
	if _, err := c.git(ctx, gitRun{dir: repo, token: tok,
		args: fetchArgs}); err != nil {
		return 0, mark(fmt.Errorf("fetching %s of %s/%s: %w", ref, c.owner, c.repo, err))
	}
	for _, commit := range []string{from, to} {
		if _, err := c.git(ctx, gitRun{dir: repo, args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", commit + "^{commit}"}}); err != nil {
			if ctx.Err() != nil {
				return 0, fmt.Errorf("measuring pull request #%d: %w", number, err)
			}
			return 0, fmt.Errorf("measuring pull request #%d of %s/%s: %.12s: %w", number, c.owner, c.repo, commit, ErrNotFetched)
		}
	}
	args := append([]string{"diff", "--no-ext-diff", "--no-renames", "--no-textconv", "--numstat", from, to, "--"}, files...)
	// The paths are literal (no pathspec magic such as ":(glob)" in a file's name).
	out, err := c.git(ctx, gitRun{dir: repo, args: args, env: []string{"GIT_LITERAL_PATHSPECS=1"}})
	if err != nil {
		return 0, fmt.Errorf("comparing %s with %s on pull request #%d: %w", from, to, number, err)
	}
	lines := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 3 {
			continue
		}
		add, err1 := strconv.Atoi(f[0])
		del, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			lines++ // binary: "-\t-\tpath"
			continue
		}
		lines += add + del
	}
	return lines, nil
}
