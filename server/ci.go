package server

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/run"
)

// checkSuitePayload is the part of a `check_suite` event we use.
type checkSuitePayload struct {
	issuesPayload
	CheckSuite *struct {
		ID           int64  `json:"id"`
		HeadBranch   string `json:"head_branch"`
		HeadSHA      string `json:"head_sha"`
		Conclusion   string `json:"conclusion"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
		App *struct {
			ID   int64  `json:"id"`
			Slug string `json:"slug"`
			Name string `json:"name"`
		} `json:"app"`
	} `json:"check_suite"`
}

var commitPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// frognanoBranch says whether branch is one frognano pushes (run.BranchName's).
func frognanoBranch(branch string) bool {
	_, ok := run.ParseBranch(branch)
	return ok
}

// checkSuite turns the repository's own CI failing on a frognano branch (a completed check
// suite of another App, GitHub Actions included) into a CI follow-up of its pull request. The
// worker starts it only while that commit is the head, and at most FROGNANO_CI_FOLLOWUPS
// times per pull request; frognano's own check suite never counts.
func (s *Server) checkSuite(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p checkSuitePayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	cs := p.CheckSuite
	if p.Action != "completed" || cs == nil || (cs.Conclusion != "failure" && cs.Conclusion != "timed_out") ||
		cs.App == nil || s.ownApp(cs.App.ID, cs.App.Slug) || !frognanoBranch(cs.HeadBranch) ||
		len(cs.PullRequests) != 1 || cs.PullRequests[0].Number <= 0 {
		return ignored(), nil
	}
	if !commitPattern.MatchString(cs.HeadSHA) || !namePattern.MatchString(cs.App.Slug) || cs.ID < 0 {
		return response{}, fmt.Errorf("%w: check_suite.id, head_sha or app.slug is malformed", ErrBadRequest)
	}
	t, err := p.targetPR(cs.PullRequests[0].Number)
	if err != nil {
		return response{}, err
	}
	d.InstallationID = t.installationID
	request := fmt.Sprintf("The check suite of %s (%s) concluded %s on commit %s, the head of this pull request. "+
		"Find out why the repository's checks fail with the changes on this branch and fix it.",
		clip.Prefix(cs.App.Name, 100), cs.App.Slug, cs.Conclusion, cs.HeadSHA)
	res, err := s.cfg.Intake.Accept(ctx, d, queue.RunRequest{
		InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue,
		Labeler: cs.App.Slug, Kind: run.KindCI, Request: request, CISHA: cs.HeadSHA, SourceID: cs.ID,
	})
	if err != nil {
		return response{}, err
	}
	return accepted(ctx, logWith(ctx, t), res, "", "CI follow-up queued", "app", cs.App.Slug), nil
}

// ownApp says whether the App of a check suite is frognano's own: by its immutable id when
// Config.AppID is known (a slug is a name: after the App is renamed, its old slug may be taken
// by another App, and frognano's own failed suites would count as CI); by slug otherwise.
func (s *Server) ownApp(id int64, slug string) bool {
	if s.cfg.AppID > 0 {
		return id == s.cfg.AppID
	}
	return strings.EqualFold(slug, s.cfg.AppSlug)
}
