package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/queue"
)

// response is the JSON body of every webhook answer.
type response struct {
	Status string  `json:"status"`
	RunIDs []int64 `json:"run_ids,omitempty"`
	code   int
}

func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	log := s.cfg.Logger.With(
		logging.DeliveryID(clip.Prefix(r.Header.Get("X-GitHub-Delivery"), 100)),
		slog.String("event", clip.Prefix(r.Header.Get("X-GitHub-Event"), 100)))
	ctx := logging.WithLogger(r.Context(), log)

	res, err := s.webhook(ctx, w, r)
	if err != nil {
		status := statusOf(err)
		level := slog.LevelWarn
		if status >= 500 {
			level = slog.LevelError
		}
		log.Log(ctx, level, "webhook refused", "status", status, logging.Err(err))
		writeJSON(w, status, map[string]string{"error": publicMessage(status)})
		return
	}
	log.InfoContext(ctx, "webhook handled", "status", res.code, "outcome", res.Status, logging.RunIDs(res.RunIDs))
	writeJSON(w, res.code, res)
}

// webhook returns only after everything it stored is committed.
func (s *Server) webhook(ctx context.Context, w http.ResponseWriter, r *http.Request) (response, error) {
	// Refuse a declared oversize body before reading any of it; cap the
	// read for bodies that do not declare their size (chunked).
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return response{}, fmt.Errorf("%w: Content-Length %d", ErrTooLarge, r.ContentLength)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return response{}, fmt.Errorf("%w: over %d bytes", ErrTooLarge, tooBig.Limit)
		}
		return response{}, fmt.Errorf("%w: reading body: %v", ErrBadRequest, err)
	}
	if err := VerifySignature(s.cfg.Secret, body, r.Header.Get("X-Hub-Signature-256")); err != nil {
		return response{}, err
	}
	event, id := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	if event == "" || id == "" || len(event) > 100 || len(id) > 100 {
		return response{}, fmt.Errorf("%w: missing or oversized X-GitHub-Event / X-GitHub-Delivery", ErrBadRequest)
	}
	d := queue.Delivery{HookTarget: hookTarget(r.Header), ID: id, Event: event}

	// Events we decode are validated by decoding them; the others are
	// checked here (one scan of the body either way).
	switch event {
	case "installation", "installation_repositories", "issues", "pull_request":
	default:
		if !json.Valid(body) {
			return response{}, fmt.Errorf("%w: body is not JSON", ErrBadRequest)
		}
	}

	switch event {
	case "ping":
		return response{Status: "pong", code: http.StatusOK}, nil
	case "installation", "installation_repositories":
		var p installationPayload
		if err := decodeAction(body, &p, &d); err != nil {
			return response{}, err
		}
		if p.Installation != nil {
			d.InstallationID = p.Installation.ID
		}
		// Uninstalled or suspended: no run there could publish, so stop them now.
		if event == "installation" && (p.Action == "deleted" || p.Action == "suspend") && d.InstallationID > 0 {
			res, err := s.cfg.Intake.CancelInstallation(ctx, d, d.InstallationID, "app "+p.Action+" on the installation")
			if err != nil {
				return response{}, err
			}
			if res.Duplicate {
				return response{Status: "duplicate", code: http.StatusOK}, nil
			}
			return response{Status: pick(len(res.RunIDs) == 0, "recorded", "cancelled"), RunIDs: res.RunIDs, code: http.StatusOK}, nil
		}
		if event == "installation" && p.Action == "new_permissions_accepted" {
			// Nothing to refresh or wake: every run reads its installation's grants when it
			// starts (githubapp.App.ForRepository), so runs queued now get the new permissions,
			// and a run that ended for want of one asked for the label again rather than being
			// restarted unasked. The log says when the grants changed.
			logging.FromContext(ctx).InfoContext(ctx, "the installation accepted the App's new permissions; runs started from now on use them",
				logging.InstallationID(d.InstallationID))
		}
		dup, err := s.cfg.Intake.Record(ctx, d, "recorded")
		if err != nil {
			return response{}, err
		}
		return response{Status: pick(dup, "duplicate", "recorded"), code: http.StatusOK}, nil
	case "issues":
		return s.issues(ctx, d, body)
	case "pull_request":
		return s.pullRequest(ctx, d, body)
	case "issue_comment", "check_suite", "pull_request_review", "pull_request_review_comment":
		return s.followUp(ctx, d, event, body)
	default:
		return ignored(), nil
	}
}

// followUp hands an event that may start a follow-up of a frognano pull request to its
// handler. Without the App's slug (nothing to mention) frognano takes no follow-ups and
// ignores them all, undecoded.
func (s *Server) followUp(ctx context.Context, d queue.Delivery, event string, body []byte) (response, error) {
	if s.mention == nil {
		return ignored(), nil
	}
	switch event {
	case "issue_comment":
		return s.issueComment(ctx, d, body)
	case "check_suite":
		return s.checkSuite(ctx, d, body)
	case "pull_request_review":
		return s.review(ctx, d, body)
	case "pull_request_review_comment":
		return s.reviewComment(ctx, d, body)
	default:
		return ignored(), nil
	}
}

func (s *Server) issues(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p issuesPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	labelled := p.Label != nil && p.Label.Name != ""

	switch {
	case p.Action == "labeled" && labelled:
		// The trigger label is the operator's unless the repository's settings name another
		// (.github/frognano.yml `label:`), as last read (queue/labelcheck.go).
		t, err := p.target(true)
		if err != nil {
			return response{}, err
		}
		d.InstallationID = t.installationID
		req := queue.RunRequest{InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue,
			Labeler: t.sender, TriggerLabel: p.Label.Name}
		decision, err := s.cfg.Intake.DecideLabel(ctx, t.repoID, p.Label.Name, s.cfg.Label)
		if err != nil {
			return response{}, err
		}
		switch decision {
		case queue.LabelIgnore:
			return ignored(), nil
		case queue.LabelCheck:
			if err := s.cfg.Intake.CheckLabel(ctx, d, req, s.cfg.Label); err != nil {
				return response{}, err
			}
			logWith(ctx, t).InfoContext(ctx, "label queued for a check of the repository's settings", "label", p.Label.Name)
			return response{Status: "label_check", code: http.StatusAccepted}, nil
		}
		res, err := s.cfg.Intake.Accept(ctx, d, req)
		if err != nil {
			return response{}, err
		}
		return accepted(ctx, logWith(ctx, t), res, "issue already has an active run", "run queued", logging.JobID(res.JobID)), nil

	case p.Action == "unlabeled" && labelled:
		t, err := p.target(false)
		if err != nil {
			return response{}, err
		}
		stops, err := s.cfg.Intake.LabelRemoved(ctx, t.repoID, t.issue, p.Label.Name, s.cfg.Label)
		if err != nil {
			return response{}, err
		}
		if !stops {
			return ignored(), nil
		}
		return s.cancelIssue(ctx, d, t, p.Action)

	case p.Action == "closed" || p.Action == "deleted" || p.Action == "transferred":
		t, err := p.target(false)
		if err != nil {
			return response{}, err
		}
		// A label's check still queued would start a run after this (queue/labelcheck.go).
		if err := s.cfg.Intake.WithdrawLabelChecks(ctx, t.repoID, t.issue); err != nil {
			return response{}, err
		}
		return s.cancelIssue(ctx, d, t, p.Action)

	default:
		return ignored(), nil
	}
}

// cancelIssue stops the issue's active run: its trigger label came off, or it was closed,
// deleted or transferred.
func (s *Server) cancelIssue(ctx context.Context, d queue.Delivery, t target, action string) (response, error) {
	d.InstallationID, d.Sender = t.installationID, t.sender // who stopped the run (runs.stopped_by)
	res, err := s.cfg.Intake.Cancel(ctx, d, t.repoID, t.issue, "issue "+action)
	if err != nil {
		return response{}, err
	}
	if res.Duplicate {
		return response{Status: "duplicate", code: http.StatusOK}, nil
	}
	if len(res.RunIDs) > 0 {
		logWith(ctx, t).InfoContext(ctx, "run cancelled", "reason", action, logging.RunIDs(res.RunIDs))
	}
	return response{Status: pick(len(res.RunIDs) == 0, "nothing_to_cancel", "cancelled"), RunIDs: res.RunIDs, code: http.StatusOK}, nil
}

// ignored answers an event, or an action of one, that frognano does not act on.
func ignored() response {
	return response{Status: "ignored", code: http.StatusAccepted}
}

// accepted answers what the intake made of a run request: a duplicate delivery, a request that
// waits for the pull request's active run (queue/waiting.go), a run already active on the
// issue (logged with activeMsg unless it is empty), or a queued run (logged with queuedMsg and
// attrs).
func accepted(ctx context.Context, log *slog.Logger, res queue.Accepted, activeMsg, queuedMsg string, attrs ...any) response {
	switch {
	case res.Duplicate:
		return response{Status: "duplicate", code: http.StatusOK}
	case res.Waiting:
		log.InfoContext(ctx, "request waits for the active run to end", logging.RunID(res.RunID))
		return response{Status: "waiting", RunIDs: []int64{res.RunID}, code: http.StatusOK}
	case res.AlreadyActive:
		if activeMsg != "" {
			log.InfoContext(ctx, activeMsg, logging.RunID(res.RunID))
		}
		return response{Status: "already_active", RunIDs: []int64{res.RunID}, code: http.StatusOK}
	default:
		log.InfoContext(ctx, queuedMsg, append([]any{logging.RunID(res.RunID)}, attrs...)...)
		return response{Status: "queued", RunIDs: []int64{res.RunID}, code: http.StatusOK}
	}
}

func logWith(ctx context.Context, t target) *slog.Logger {
	return logging.FromContext(ctx).With(logging.InstallationID(t.installationID),
		logging.Repo(t.owner, t.repo), logging.Issue(t.issue))
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
