package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/queue"
)

// reviewPayload is the part of a `pull_request_review` event we use.
type reviewPayload struct {
	issuesPayload
	Review *struct {
		ID      int64   `json:"id"`
		Body    *string `json:"body"`
		State   string  `json:"state"`
		HTMLURL string  `json:"html_url"`
		User    user    `json:"user"`
	} `json:"review"`
	PullRequest *pullRequestRef `json:"pull_request"`
}

// review turns a submitted review of a frognano pull request that requests changes, or of any
// pull request that mentions the App, into a follow-up run with the review's text, checked by the worker like a
// comment; the worker then reads the review's line comments (its source) for the task.
func (s *Server) review(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p reviewPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	r := p.Review
	if p.Action != "submitted" || r == nil || p.PullRequest == nil {
		return ignored(), nil
	}
	text := ""
	if r.Body != nil {
		text = *r.Body
	}
	// A review that requests changes asks frognano on its own pull requests only; one that
	// mentions the App asks on any (the worker refuses a fork's).
	asks := (strings.EqualFold(r.State, "changes_requested") && p.PullRequest.frognanos()) || s.mention.Visible(text)
	if !asks || r.User.bot() {
		return ignored(), nil
	}
	if r.ID < 0 {
		return response{}, fmt.Errorf("%w: review.id is negative", ErrBadRequest)
	}
	if strings.TrimSpace(text) == "" {
		text = "(The review requests changes without a summary: see its line comments.)"
	}
	t, err := p.targetPR(p.PullRequest.Number)
	if err != nil {
		return response{}, err
	}
	// The same path as a comment: `@APP stop` in a review stops, anything else asks (ask
	// checks the author's login).
	return s.ask(ctx, d, t, r.User.Login, text, r.HTMLURL, r.ID)
}
