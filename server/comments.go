package server

import (
	"context"
	"regexp"

	"github.com/frognano/frognano/queue"
)

// maxRequestBytes bounds the reviewer's text kept for a follow-up (GitHub's comment limit is
// 65536 characters).
const maxRequestBytes = 64 << 10

// commentPayload is the part of an `issue_comment` event we use.
type commentPayload struct {
	issuesPayload
	Issue *struct {
		Number      int `json:"number"`
		PullRequest *struct {
			URL string `json:"url"`
		} `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID      int64  `json:"id"`
		Body    string `json:"body"`
		HTMLURL string `json:"html_url"`
		User    user   `json:"user"`
	} `json:"comment"`
}

// mention matches `@slug` as GitHub links it: not inside a word or an e-mail address.
func mention(slug string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_.@/-])@` + regexp.QuoteMeta(slug) + `(?:$|[^A-Za-z0-9_-])`)
}

// issueComment turns a comment that mentions the App on a pull request into a follow-up run
// (or, `@APP stop`, into a stop request). Whether the PR is frognano's and the author may
// write is checked by the worker, before any text reaches the model; comments by bots
// (frognano's own included) are dropped here, so nothing loops.
func (s *Server) issueComment(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p commentPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	c := p.Comment
	if p.Action != "created" || p.Issue == nil || p.Issue.PullRequest == nil || c == nil ||
		c.User.bot() || !s.mention.MatchString(c.Body) {
		return ignored(), nil
	}
	t, err := p.targetPR(p.Issue.Number)
	if err != nil {
		return response{}, err
	}
	return s.ask(ctx, d, t, c.User.Login, c.Body, c.HTMLURL, 0)
}
