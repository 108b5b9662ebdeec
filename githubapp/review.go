package githubapp

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// MaxReviewComments bounds the line comments ReviewComments reads of one review: a review
// with more is cut, and the caller says so.
const MaxReviewComments = 100

// ReviewComment is one line comment of a pull request review, as a follow-up's task shows it.
// Every text field is the reviewer's (or GitHub's diff), untrusted.
type ReviewComment struct {
	ID     int64
	Author string // the comment's author's login
	Path   string
	// Line is the line of the file the comment is on (the diff's right side for side RIGHT, the
	// left for LEFT), StartLine the first of a multi-line comment (0: one line). Line is 0 when
	// the comment no longer applies to the diff (outdated), and then OriginalLine says where it
	// was on the commit it was written on.
	Line, StartLine, OriginalLine int
	Side                          string // "LEFT", "RIGHT" or ""
	DiffHunk                      string
	Body                          string
	HTMLURL                       string
}

// ReviewComments reads the line comments of review reviewID on pull request number, in the
// order GitHub lists them (paginated), at most MaxReviewComments; more reports whether there
// were more.
func (c *Client) ReviewComments(ctx context.Context, number int, reviewID int64) (comments []ReviewComment, more bool, err error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.gh.PullRequests.ListReviewComments(ctx, c.owner, c.repo, number, reviewID, opts)
		if err != nil {
			return nil, false, mark(fmt.Errorf("listing comments of review %d on %s/%s#%d: %w", reviewID, c.owner, c.repo, number, err))
		}
		for _, rc := range page {
			if len(comments) == MaxReviewComments {
				return comments, true, nil
			}
			comments = append(comments, ReviewComment{
				ID: rc.GetID(), Author: rc.GetUser().GetLogin(), Path: rc.GetPath(),
				Line: rc.GetLine(), StartLine: rc.GetStartLine(), OriginalLine: rc.GetOriginalLine(), Side: rc.GetSide(),
				DiffHunk: rc.GetDiffHunk(), Body: rc.GetBody(), HTMLURL: rc.GetHTMLURL(),
			})
		}
		if resp.NextPage == 0 {
			return comments, false, nil
		}
		if len(comments) == MaxReviewComments {
			return comments, true, nil
		}
		opts.Page = resp.NextPage
	}
}
