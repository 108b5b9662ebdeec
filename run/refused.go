package run

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
)

// Exit reasons of runs GitHub refused; like ExitPermissions, they say what happened.
const (
	// ExitGitHubRefused: GitHub refused a request or a push for good (a ruleset, an archived
	// repository, a deleted issue, a suspended App...): asking again gets the same answer
	// until a person changes something, which the run's note names.
	ExitGitHubRefused = "github_refused"
	// ExitGitHubRateLimited: GitHub's rate limit asked to wait longer than the run's budget.
	ExitGitHubRateLimited = "github_rate_limited"
)

// refused ends a run GitHub refused: the same reason (githubapp.Explain's, one paragraph) goes
// to the log, the run's record (its page, `frognano runs show`, and by its exit reason the
// frognano_runs_finished_total metric) and GitHub. There its outbox edits the status comment
// or the follow-up's reply; when none exists yet (GitHub refused before it was posted) and the
// installation can comment (issues: write), the outbox posts one instead of staying silent
// (outbox.Post: one comment, whoever writes it and whenever a writer dies). A comment GitHub
// refuses too is given up: the record keeps the reason. Nothing is retried.
func (a *attempt) refused(ctx context.Context, exitReason, note, errText string) {
	r := a.run
	r.ExitReason = exitReason
	a.log.ErrorContext(ctx, "GitHub refused the run; it ends", "exit_reason", exitReason, "reason", note, slog.String(logging.ErrorKey, errText))
	v := a.view(StateFailed, note)
	post := a.repo != nil && a.repo.Grants().Has("issues", "write")
	if r.CommentID == 0 && !post {
		a.log.WarnContext(ctx, "the App cannot comment there; the reason is on the run's page and in its record")
	}
	if _, err := a.record(ctx, StateFailed, exitReason, note, "", 0, &v, true, post); err != nil {
		a.log.ErrorContext(ctx, "recording the refusal", logging.Err(err))
	}
}

// rateLimitNote says why a run ends on a rate limit, when the wait GitHub asked for is longer
// than the job's whole budget (a retry would meet the same limit); "" otherwise.
func (a *attempt) rateLimitNote(err error) string {
	wait, limited := githubapp.RateLimitWait(err, time.Now())
	if !limited || wait <= a.p.cfg.JobTimeout {
		return ""
	}
	reason, _ := githubapp.Explain(err)
	return rateLimitedNote(reason, a.p.cfg.JobTimeout)
}

// ExitPermissions is the exit reason of a run its installation lacked a core permission for.
const ExitPermissions = "github_permissions"

// lacksPermissions ends a run the installation cannot serve (githubapp.CorePermissions missing):
// one comment on the issue or pull request saying which permissions and who can approve them,
// when the installation can still comment, and the same reason in the run's record (its page,
// `frognano runs`, the frognano_runs_finished_total metric) and the log. It is no error: asking
// again gets the same answer until someone approves the App's permissions, so nothing retries.
func (a *attempt) lacksPermissions(ctx context.Context, e *githubapp.MissingPermissionsError) error {
	r := a.run
	note := missingPermissionsNote(e)
	a.log.ErrorContext(ctx, "the installation lacks a permission every run needs; the run ends", "missing", strings.Join(e.Missing, "; "))
	r.ExitReason = ExitPermissions
	var v *Status
	if e.CanComment() {
		s := a.view(StateFailed, note)
		v = &s
	}
	// Without a status comment yet, the outbox posts one (outbox.Post).
	if ok, err := a.record(ctx, StateFailed, ExitPermissions, note, "", 0, v, false, v != nil); err != nil {
		return err
	} else if !ok {
		return errRunCancelled
	}
	if !e.CanComment() {
		a.log.WarnContext(ctx, "the installation cannot comment either; the reason is on the run's page and in its record")
	}
	return nil
}
