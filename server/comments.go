package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/frognano/frognano/clip"
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
		User    struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
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
	ignored := response{Status: "ignored", code: http.StatusAccepted}
	if s.mention == nil {
		return ignored, nil
	}
	var p commentPayload
	if err := decode(body, &p); err != nil {
		return response{}, err
	}
	d.Action = clip.Prefix(p.Action, 100)
	if p.Action != "created" || p.Issue == nil || p.Issue.PullRequest == nil || p.Comment == nil {
		return ignored, nil
	}
	author := p.Comment.User.Login
	if p.Comment.User.Type == "Bot" || strings.HasSuffix(author, "[bot]") || !s.mention.MatchString(p.Comment.Body) {
		return ignored, nil
	}
	p.issuesPayload.Issue = &struct {
		Number int `json:"number"`
	}{p.Issue.Number}
	t, err := p.target(true)
	if err != nil {
		return response{}, err
	}
	if !loginPattern.MatchString(author) {
		return response{}, fmt.Errorf("%w: comment.user.login is not a valid GitHub login", ErrBadRequest)
	}
	d.InstallationID = t.installationID
	log := logWith(ctx, t)
	rest := strings.TrimSpace(s.mention.ReplaceAllString(p.Comment.Body, " "))
	if strings.EqualFold(strings.TrimRight(rest, ".!"), "stop") {
		dup, err := s.cfg.Intake.RequestStop(ctx, d, queue.StopArgs{InstallationID: t.installationID, RepoID: t.repoID,
			Owner: t.owner, Repo: t.repo, PR: t.issue, Requester: author})
		if err != nil {
			return response{}, err
		}
		log.InfoContext(ctx, "stop requested", "requester", author)
		return response{Status: pick(dup, "duplicate", "stop_requested"), code: http.StatusOK}, nil
	}
	res, err := s.cfg.Intake.Accept(ctx, d, queue.RunRequest{
		InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue, Labeler: author,
		Kind: queue.KindFollowUp, Request: clip.Bytes(p.Comment.Body, maxRequestBytes), RequestURL: clip.Prefix(p.Comment.HTMLURL, 500),
	})
	if err != nil {
		return response{}, err
	}
	switch {
	case res.Duplicate:
		return response{Status: "duplicate", code: http.StatusOK}, nil
	case res.AlreadyActive:
		log.InfoContext(ctx, "pull request already has an active run", queue.AttrRunID, res.RunID)
		return response{Status: "already_active", RunIDs: []int64{res.RunID}, code: http.StatusOK}, nil
	default:
		log.InfoContext(ctx, "follow-up queued", queue.AttrRunID, res.RunID, queue.AttrJobID, res.JobID)
		return response{Status: "queued", RunIDs: []int64{res.RunID}, code: http.StatusOK}, nil
	}
}
