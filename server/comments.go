package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/run"
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

// issueComment turns a comment that mentions the App into a run: on a pull request a
// follow-up (or, `@APP stop`, a stop request), on an issue a run of the issue as the label
// starts (askIssue). Whether the author may write (and, on a pull request, whether frognano may
// work on it) is checked by the worker, before any text reaches the model; comments by bots
// (frognano's own included) and edits are dropped here, so nothing loops.
func (s *Server) issueComment(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p commentPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	c := p.Comment
	if p.Action != "created" || p.Issue == nil || c == nil || c.User.bot() || !s.mention.MatchString(c.Body) {
		return ignored(), nil
	}
	t, err := p.targetPR(p.Issue.Number)
	if err != nil {
		return response{}, err
	}
	if p.Issue.PullRequest == nil {
		return s.askIssue(ctx, d, t, c.User.Login, c.Body, c.HTMLURL)
	}
	return s.ask(ctx, d, t, c.User.Login, c.Body, c.HTMLURL, 0)
}

// askIssue queues the run a mention of the App on an issue asks for: a run of the issue, as the
// label starts, with run.TriggerMention. Only a mention a human can see counts (one in hidden
// text is no request); the text after it is the request: its leading options (run.ParseOptions)
// and the requester's instructions. Options that do not parse are not guessed at: the run is
// queued without them and its worker, once it has found that the author may write, answers
// with the option's error and starts nothing. `@APP stop` stops the issue's run as on a pull
// request.
func (s *Server) askIssue(ctx context.Context, d queue.Delivery, t target, author, text, url string) (response, error) {
	visible := run.SanitizeIssueText(text)
	loc := s.mention.FindStringIndex(visible)
	if loc == nil {
		return ignored(), nil
	}
	if !loginPattern.MatchString(author) {
		return response{}, fmt.Errorf("%w: the comment's user.login is not a valid GitHub login", ErrBadRequest)
	}
	// The match may start one character before the `@` and end one after the slug.
	at := loc[0] + strings.IndexByte(visible[loc[0]:loc[1]], '@')
	rest := strings.TrimSpace(visible[at+1+len(s.cfg.AppSlug):])
	d.InstallationID = t.installationID
	if strings.EqualFold(strings.TrimRight(rest, ".!"), "stop") {
		dup, err := s.cfg.Intake.RequestStop(ctx, d, queue.StopArgs{InstallationID: t.installationID, RepoID: t.repoID,
			Owner: t.owner, Repo: t.repo, PR: t.issue, Requester: author, OnIssue: true})
		if err != nil {
			return response{}, err
		}
		logWith(ctx, t).InfoContext(ctx, "stop requested", "requester", author)
		return response{Status: pick(dup, "duplicate", "stop_requested"), code: http.StatusOK}, nil
	}
	opts, _, err := run.ParseOptions(rest)
	if err != nil {
		opts = run.Options{} // the worker says what is wrong (run.ParseOptions again)
	}
	res, err := s.cfg.Intake.Accept(ctx, d, queue.RunRequest{
		InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue, Labeler: author,
		Kind: run.KindIssue, Trigger: run.TriggerMention, Options: opts,
		Request: clip.Bytes(rest, maxRequestBytes), RequestURL: clip.Prefix(url, 500),
	})
	if err != nil {
		return response{}, err
	}
	return accepted(ctx, logWith(ctx, t), res, "issue already has an active run", "run queued", logging.JobID(res.JobID)), nil
}
