package githubapp

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/logging"
)

// Person is who asked for a run: the person who labelled the issue, or who asked for a
// follow-up. Publish credits them in the commit (a Co-authored-by trailer with their GitHub
// no-reply address) and asks them to review the draft pull request.
type Person struct {
	Login string
	// ID is their numeric GitHub user id, which the no-reply address needs; 0: Publish looks
	// it up (GET /users/{login}).
	ID int64
}

// personLogin is GitHub's login syntax; a bot ("[bot]") is never credited nor asked to review.
var personLogin = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// noReplyDomain is the domain of GitHub's no-reply addresses on the configured GitHub:
// users.noreply.github.com on github.com, users.noreply.HOST elsewhere (GitHub Enterprise).
func noReplyDomain(webURL string) string {
	host := "github.com"
	if u, err := url.Parse(webURL); err == nil && u.Hostname() != "" {
		host = strings.ToLower(u.Hostname())
	}
	if host == "www.github.com" {
		host = "github.com"
	}
	return "users.noreply." + host
}

// coAuthorTrailer is the "Co-authored-by:" line for p, or "" when there is none to give: no
// login, a bot, or an id that could not be found (logged).
func (c *Client) coAuthorTrailer(ctx context.Context, p Person) string {
	if !personLogin.MatchString(p.Login) {
		return ""
	}
	id := p.ID
	if id <= 0 {
		u, _, err := c.gh.Users.Get(ctx, p.Login)
		if err != nil || u.GetID() <= 0 || !strings.EqualFold(u.GetLogin(), p.Login) {
			c.log.WarnContext(ctx, "the commit does not credit who asked: their user id could not be read", "login", p.Login, logging.Err(err))
			return ""
		}
		id = u.GetID()
	}
	return fmt.Sprintf("Co-authored-by: %s <%s+%s@%s>", p.Login, strconv.FormatInt(id, 10), p.Login, noReplyDomain(c.app.cfg.URL))
}

// withTrailer adds trailer to a commit message as its last paragraph.
func withTrailer(message, trailer string) string {
	if trailer == "" {
		return message
	}
	return strings.TrimRight(message, "\n") + "\n\n" + trailer + "\n"
}

// requestReview asks p to review pull request pr, unless p is its author. GitHub refuses
// (422) a person without access to the repository; that, and any other failure, is logged and
// never fails the publish: the pull request is what counts.
func (c *Client) requestReview(ctx context.Context, pr *github.PullRequest, p Person) {
	if !personLogin.MatchString(p.Login) || strings.EqualFold(pr.GetUser().GetLogin(), p.Login) {
		return
	}
	for _, r := range pr.RequestedReviewers {
		if strings.EqualFold(r.GetLogin(), p.Login) {
			return
		}
	}
	_, _, err := c.gh.PullRequests.RequestReviewers(ctx, c.owner, c.repo, pr.GetNumber(), github.ReviewersRequest{Reviewers: []string{p.Login}})
	if err != nil {
		c.log.WarnContext(ctx, "could not ask for a review of the pull request (it stays as it is)", "number", pr.GetNumber(), "reviewer", p.Login, logging.Err(err))
		return
	}
	c.log.InfoContext(ctx, "asked for a review of the pull request", "number", pr.GetNumber(), "reviewer", p.Login)
}

// decorate adds the labels of in to pull request pr and asks its Reviewers and TeamReviewers
// for a review (a person as requestReview does, one request each, so that one GitHub refuses
// does not take the others with it). Failures are logged and never fail the publish.
func (c *Client) decorate(ctx context.Context, pr *github.PullRequest, in PublishInput) {
	if len(in.Labels) > 0 {
		if _, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, pr.GetNumber(), in.Labels); err != nil {
			c.log.WarnContext(ctx, "could not add the settings' labels to the pull request", "number", pr.GetNumber(), logging.Err(err))
		}
	}
	for _, login := range in.Reviewers {
		c.requestReview(ctx, pr, Person{Login: login})
	}
	if len(in.TeamReviewers) > 0 {
		_, _, err := c.gh.PullRequests.RequestReviewers(ctx, c.owner, c.repo, pr.GetNumber(), github.ReviewersRequest{TeamReviewers: in.TeamReviewers})
		if err != nil {
			c.log.WarnContext(ctx, "could not ask the settings' teams for a review", "number", pr.GetNumber(), logging.Err(err))
		}
	}
}
