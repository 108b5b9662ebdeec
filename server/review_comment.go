package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/run"
)

// reviewCommentPayload is the part of a `pull_request_review_comment` event we use.
type reviewCommentPayload struct {
	issuesPayload
	Comment *struct {
		ID       int64  `json:"id"`
		ReviewID int64  `json:"pull_request_review_id"`
		Body     string `json:"body"`
		HTMLURL  string `json:"html_url"`
		User     user   `json:"user"`
	} `json:"comment"`
	PullRequest *pullRequestRef `json:"pull_request"`
}

// reviewComment turns a line comment on a pull request that mentions the App into a follow-up
// run (on any pull request: the worker refuses a fork's), as a comment on the conversation does (`@APP stop` too). GitHub files even a
// lone line comment under a review of its own, so the run's source is that review: the worker
// reads all its line comments (file, line, hunk) after checking the author, and a review whose
// submission and line comments all ask starts one run.
func (s *Server) reviewComment(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p reviewCommentPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	c := p.Comment
	if p.Action != "created" || c == nil || p.PullRequest == nil || c.User.bot() || !s.mention.Visible(c.Body) {
		return ignored(), nil
	}
	if c.ReviewID < 0 {
		return response{}, fmt.Errorf("%w: comment.pull_request_review_id is negative", ErrBadRequest)
	}
	t, err := p.targetPR(p.PullRequest.Number)
	if err != nil {
		return response{}, err
	}
	return s.ask(ctx, d, t, c.User.Login, c.Body, c.HTMLURL, c.ReviewID)
}

// ask queues what a writer's mention of the App on a pull request asks: `@APP stop` stops its
// follow-ups, anything else starts one with the text as the request (source: the review whose
// line comments come with it, 0 none). The author is checked by the worker, before any text
// reaches the model.
func (s *Server) ask(ctx context.Context, d queue.Delivery, t target, author, text, url string, source int64) (response, error) {
	if !loginPattern.MatchString(author) {
		return response{}, fmt.Errorf("%w: the comment's user.login is not a valid GitHub login", ErrBadRequest)
	}
	d.InstallationID = t.installationID
	log := logWith(ctx, t)
	// A stop is read in what a person sees: `<!-- note --> @APP stop` stops too.
	rest := strings.TrimSpace(s.mention.ReplaceAllString(run.SanitizeIssueText(text), " "))
	if s.mention.Visible(text) && strings.EqualFold(strings.TrimRight(rest, ".!"), "stop") {
		dup, err := s.cfg.Intake.RequestStop(ctx, d, queue.StopArgs{InstallationID: t.installationID, RepoID: t.repoID,
			Owner: t.owner, Repo: t.repo, PR: t.issue, Requester: author})
		if err != nil {
			return response{}, err
		}
		log.InfoContext(ctx, "stop requested", "requester", author)
		return response{Status: pick(dup, "duplicate", "stop_requested"), code: http.StatusOK}, nil
	}
	opts, request := s.pullRequestOptions(text)
	res, err := s.cfg.Intake.Accept(ctx, d, queue.RunRequest{
		InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue, Labeler: author,
		Kind: run.KindFollowUp, Request: clip.Bytes(request, maxRequestBytes), RequestURL: clip.Prefix(url, 500), SourceID: source,
		Options: opts,
	})
	if err != nil {
		return response{}, err
	}
	return accepted(ctx, log, res, "pull request already has an active run", "follow-up queued", logging.JobID(res.JobID)), nil
}

// pullRequestOptions reads the options right after the first visible mention of the App in a
// request on a pull request (run.ParsePullRequestOptions: attempts= and model=; base= and
// anything that does not parse are kept in Options.Refused, for the worker to answer once it
// knows the requester may write). The request the model reads is the text with the options
// taken out; without options it is the text as it came.
func (s *Server) pullRequestOptions(text string) (run.Options, string) {
	visible := run.SanitizeIssueText(text)
	loc := s.mention.FindStringIndex(visible)
	if loc == nil {
		return run.Options{}, text
	}
	at := loc[0] + strings.IndexByte(visible[loc[0]:loc[1]], '@')
	end := at + 1 + len(s.cfg.AppSlug)
	after := strings.TrimSpace(visible[end:])
	opts, rest := run.ParsePullRequestOptions(after)
	if opts.Refused != nil || rest == after {
		return opts, text
	}
	return opts, strings.TrimSpace(visible[:end] + " " + rest)
}
