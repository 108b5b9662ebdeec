package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/queue"
)

// pullRequestPayload is the part of a `pull_request` event frognano records (package
// outcome): what became of a pull request a run published to.
type pullRequestPayload struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest *struct {
		Number         int        `json:"number"`
		State          string     `json:"state"`
		Draft          bool       `json:"draft"`
		Merged         bool       `json:"merged"`
		MergedBy       *user      `json:"merged_by"`
		MergeCommitSHA *string    `json:"merge_commit_sha"`
		MergedAt       *time.Time `json:"merged_at"`
		ClosedAt       *time.Time `json:"closed_at"`
		UpdatedAt      *time.Time `json:"updated_at"`
		Commits        int        `json:"commits"`
		Head           struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
	// After is synchronize's new head.
	After      string `json:"after"`
	Repository *struct {
		ID int64 `json:"id"`
	} `json:"repository"`
	Sender       *user `json:"sender"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

func (p *pullRequestPayload) action() string { return p.Action }

var shaPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// event checks the payload and returns what package outcome records of it, for an action it
// records (outcome.Actions). appBot is the App's own bot login ("": not known).
func (p *pullRequestPayload) event(appBot string) (outcome.Event, int64, error) {
	bad := func(what string) (outcome.Event, int64, error) {
		return outcome.Event{}, 0, fmt.Errorf("%w: %s", ErrBadRequest, what)
	}
	pr := p.PullRequest
	switch {
	case pr == nil || pr.Number <= 0 || (p.Number != 0 && p.Number != pr.Number):
		return bad("pull_request.number missing or not the event's number")
	case p.Repository == nil || p.Repository.ID <= 0:
		return bad("repository.id missing")
	case p.Installation == nil || p.Installation.ID <= 0:
		return bad("installation.id missing (is this a GitHub App delivery?)")
	case p.Sender == nil || !loginPattern.MatchString(p.Sender.Login):
		return bad("sender.login is not a valid GitHub login")
	case pr.UpdatedAt == nil:
		return bad("pull_request.updated_at missing")
	}
	ev := outcome.Event{Action: p.Action, RepoID: p.Repository.ID, Number: pr.Number, Sender: p.Sender.Login,
		At: *pr.UpdatedAt, HeadSHA: pr.Head.SHA, Commits: max(pr.Commits, 0), Draft: pr.Draft}
	if appBot != "" {
		ev.ByApp = strings.EqualFold(p.Sender.Login, appBot)
	} else {
		ev.ByApp = p.Sender.bot()
	}
	if p.Action == "synchronize" && p.After != "" {
		ev.HeadSHA = p.After
	}
	if ev.HeadSHA != "" && !shaPattern.MatchString(ev.HeadSHA) {
		return bad("the head is not a commit id")
	}
	// Every field frognano may record holds up, whatever the action.
	if pr.MergedBy != nil && !loginPattern.MatchString(pr.MergedBy.Login) {
		return bad("pull_request.merged_by.login is not a valid GitHub login")
	}
	if pr.MergeCommitSHA != nil && *pr.MergeCommitSHA != "" && !shaPattern.MatchString(*pr.MergeCommitSHA) {
		return bad("pull_request.merge_commit_sha is not a commit id")
	}
	if p.Action == "closed" {
		if pr.ClosedAt != nil {
			ev.At = *pr.ClosedAt
		}
		if pr.Merged {
			ev.Merged = true
			if pr.MergedAt != nil {
				ev.At = *pr.MergedAt
			}
			if pr.MergedBy != nil {
				ev.MergedBy = pr.MergedBy.Login
			}
			if pr.MergeCommitSHA != nil {
				ev.MergeSHA = *pr.MergeCommitSHA
			}
		}
	}
	return ev, p.Installation.ID, nil
}

// pullRequest records what became of a pull request frognano follows (merged, closed,
// reopened, marked ready or draft, pushed to); any other pull request, or action, is ignored
// (202) with nothing stored.
func (s *Server) pullRequest(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p pullRequestPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	if !outcome.Actions[p.Action] {
		return ignored(), nil
	}
	appBot := ""
	if s.cfg.AppSlug != "" {
		appBot = s.cfg.AppSlug + "[bot]"
	}
	ev, installation, err := p.event(appBot)
	if err != nil {
		return response{}, err
	}
	d.InstallationID, d.Sender = installation, clip.Prefix(ev.Sender, 100)
	res, err := s.cfg.Intake.PullRequestEvent(ctx, d, ev)
	if err != nil {
		return response{}, err
	}
	switch {
	case res.Ignored:
		return ignored(), nil
	case res.Duplicate:
		return response{Status: "duplicate", code: http.StatusOK}, nil
	case res.Stale:
		return response{Status: "stale", code: http.StatusOK}, nil
	}
	logging.FromContext(ctx).InfoContext(ctx, "pull request outcome recorded", logging.InstallationID(installation),
		"repo_id", ev.RepoID, "pull_request", ev.Number, "action", ev.Action, "merged", ev.Merged)
	return response{Status: "recorded", code: http.StatusOK}, nil
}
