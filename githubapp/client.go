package githubapp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/fault"
)

// Permission returns user's role on the repository: "admin", "maintain", "write", "triage",
// "read" or "none". It prefers role_name, because the older permission field folds maintain into
// write and triage into read; a custom role's name is not one of those, so then the base
// permission is used. A user GitHub does not know (404) is "none", the safe answer for a
// permission gate.
func (c *Client) Permission(ctx context.Context, user string) (string, error) {
	level, _, err := c.gh.Repositories.GetPermissionLevel(ctx, c.owner, c.repo, user)
	if err != nil {
		if statusCode(err) == http.StatusNotFound {
			return "none", nil
		}
		return "", mark(fmt.Errorf("getting permission of %q on %s/%s: %w", user, c.owner, c.repo, err))
	}
	switch role := level.GetRoleName(); role {
	case "admin", "maintain", "write", "triage", "read", "none":
		return role, nil
	}
	switch perm := level.GetPermission(); perm {
	case "admin", "maintain", "write", "triage", "read", "none":
		return perm, nil
	}
	return "none", nil
}

// Issue returns the title, body and state ("open" or "closed") of an issue.
func (c *Client) Issue(ctx context.Context, number int) (title, body, state string, err error) {
	issue, _, err := c.gh.Issues.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return "", "", "", mark(fmt.Errorf("getting issue %s/%s#%d: %w", c.owner, c.repo, number, err))
	}
	return issue.GetTitle(), issue.GetBody(), issue.GetState(), nil
}

// React adds a reaction such as "eyes" to an issue. Adding the same reaction twice is harmless.
func (c *Client) React(ctx context.Context, number int, content string) error {
	if _, _, err := c.gh.Reactions.CreateIssueReaction(ctx, c.owner, c.repo, number, content); err != nil {
		return mark(fmt.Errorf("reacting %q to %s/%s#%d: %w", content, c.owner, c.repo, number, err))
	}
	return nil
}

// Comment posts a comment on an issue or pull request. The body is redacted first.
func (c *Client) Comment(ctx context.Context, number int, body string) (int64, error) {
	comment, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &github.IssueComment{Body: github.String(Redact(body))})
	if err != nil {
		return 0, mark(fmt.Errorf("commenting on %s/%s#%d: %w", c.owner, c.repo, number, err))
	}
	return comment.GetID(), nil
}

// FindComment returns the id of the first comment on issue number whose body begins with
// marker and whose author is an App's bot (a login ending in "[bot]", which no person's can:
// a person who copies the marker into a comment is not taken for the App), 0 when there is
// none. It reads every page of the issue's comments, newest first.
func (c *Client) FindComment(ctx context.Context, number int, marker string) (int64, error) {
	opts := &github.IssueListCommentsOptions{Sort: github.String("created"), Direction: github.String("desc"),
		ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return 0, mark(fmt.Errorf("listing the comments of %s/%s#%d: %w", c.owner, c.repo, number, err))
		}
		for _, cm := range comments {
			if strings.HasPrefix(cm.GetBody(), marker) && strings.HasSuffix(cm.GetUser().GetLogin(), "[bot]") {
				return cm.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

// RemoveLabel removes a label from an issue or pull request. A label that is not there (404)
// is no error: the goal is that it is gone. The name is a repository's choice (its settings'
// `label:`), so it is escaped as one path segment: go-github puts it in the path as it is, where
// a slash, `..`, `#` or `?` would reach another endpoint (a branch's ref) or another label. A
// name of dots only cannot be one segment GitHub reads as that label: it is refused.
func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	if strings.Trim(label, ".") == "" {
		return fault.Permanent(fmt.Errorf("removing label %q from %s/%s#%d: a label named only by dots cannot be named in a URL", label, c.owner, c.repo, number))
	}
	if _, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, number, url.PathEscape(label)); err != nil && statusCode(err) != http.StatusNotFound {
		return mark(fmt.Errorf("removing label %q from %s/%s#%d: %w", label, c.owner, c.repo, number, err))
	}
	return nil
}

// PullRequest is what a follow-up run needs to know of a pull request.
type PullRequest struct {
	Number                     int
	State                      string // "open" or "closed"
	Title, Body                string
	HeadRef, HeadRepo, HeadSHA string // HeadRepo is "owner/name", for people to read
	BaseRef                    string
	HTMLURL                    string
	// HeadRepoID is the head repository's id: a fork's is not this repository's, whatever
	// the names.
	HeadRepoID int64
	// HeadGone: the pull request is closed and its head branch no longer exists (someone
	// deleted it, which closes the pull request on GitHub). Looked up for closed pull requests
	// of this repository only.
	HeadGone bool
}

// PullRequest reads pull request number.
func (c *Client) PullRequest(ctx context.Context, number int) (PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return PullRequest{}, mark(fmt.Errorf("getting pull request %s/%s#%d: %w", c.owner, c.repo, number, err))
	}
	out := PullRequest{
		Number: pr.GetNumber(), State: pr.GetState(), Title: pr.GetTitle(), Body: pr.GetBody(),
		HeadRef: pr.GetHead().GetRef(), HeadRepo: pr.GetHead().GetRepo().GetFullName(), HeadSHA: pr.GetHead().GetSHA(),
		BaseRef: pr.GetBase().GetRef(), HTMLURL: pr.GetHTMLURL(), HeadRepoID: pr.GetHead().GetRepo().GetID(),
	}
	if out.State == "closed" && out.HeadRef != "" && out.HeadRepo == pr.GetBase().GetRepo().GetFullName() {
		if out.HeadGone, err = c.branchGone(ctx, out.HeadRef); err != nil {
			return PullRequest{}, err
		}
	}
	return out, nil
}

// branchGone reports whether branch is not on GitHub (GET /git/ref/heads/{branch} answers 404).
func (c *Client) branchGone(ctx context.Context, branch string) (bool, error) {
	_, resp, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, "heads/"+branch)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return true, nil
	}
	if err != nil {
		return false, mark(fmt.Errorf("looking up branch %s of %s/%s: %w", branch, c.owner, c.repo, err))
	}
	return false, nil
}

// EditComment replaces the body of a comment. The body is redacted first.
func (c *Client) EditComment(ctx context.Context, commentID int64, body string) error {
	_, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, commentID, &github.IssueComment{Body: github.String(Redact(body))})
	if err != nil {
		return mark(fmt.Errorf("editing comment %d on %s/%s: %w", commentID, c.owner, c.repo, err))
	}
	return nil
}
