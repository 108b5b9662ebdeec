package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/frognano/frognano/clip"
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
		User    struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"review"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			Ref string `json:"ref"`
		} `json:"head"`
	} `json:"pull_request"`
}

// review turns a submitted review of a frognano pull request that requests changes or
// mentions the App into a follow-up run with the review's text, checked by the worker like a
// comment; the worker then reads the review's line comments (its source) for the task.
func (s *Server) review(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	ignored := response{Status: "ignored", code: http.StatusAccepted}
	if s.mention == nil {
		return ignored, nil
	}
	var p reviewPayload
	if err := decode(body, &p); err != nil {
		return response{}, err
	}
	d.Action = clip.Prefix(p.Action, 100)
	if p.Action != "submitted" || p.Review == nil || p.PullRequest == nil || !frognanoBranch.MatchString(p.PullRequest.Head.Ref) {
		return ignored, nil
	}
	text := ""
	if p.Review.Body != nil {
		text = *p.Review.Body
	}
	author := p.Review.User.Login
	asks := strings.EqualFold(p.Review.State, "changes_requested") || s.mention.MatchString(text)
	if !asks || p.Review.User.Type == "Bot" || strings.HasSuffix(author, "[bot]") {
		return ignored, nil
	}
	if !loginPattern.MatchString(author) {
		return response{}, fmt.Errorf("%w: review.user.login is not a valid GitHub login", ErrBadRequest)
	}
	if p.Review.ID < 0 {
		return response{}, fmt.Errorf("%w: review.id is negative", ErrBadRequest)
	}
	if strings.TrimSpace(text) == "" {
		text = "(The review requests changes without a summary: see its line comments.)"
	}
	p.issuesPayload.Issue = &struct {
		Number int `json:"number"`
	}{p.PullRequest.Number}
	t, err := p.target(true)
	if err != nil {
		return response{}, err
	}
	// The same path as a comment: `@APP stop` in a review stops, anything else asks.
	return s.ask(ctx, d, t, author, text, p.Review.HTMLURL, p.Review.ID)
}
