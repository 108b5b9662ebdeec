package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/githubapp"
)

// Run states, as stored in runs.state.
const (
	StateWaiting   = "waiting" // a request waiting for its pull request's active run (waiting.go)
	StateQueued    = "queued"
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
	StateSkipped   = "skipped"
)

// run is the worker's view of one runs row.
type run struct {
	ID             int64
	InstallationID int64
	RepoID         int64 // the repository's immutable id: names it where a name could be taken
	Owner, Repo    string
	Issue          int
	Labeler        string
	State          string
	CommentID      int64
	Attempts       int
	ExtraRequests  int
	BaseSHA        string
	BaseBranch     string
	AgentDone      bool
	Patch          []byte
	ExitReason     string
	Steps          int
	ElapsedMS      int64
	Summary        string
	PRBody         string
	Headline       string
	Check          *githubapp.CheckRun // the check run to report once published; nil: none
	Kind           string              // KindIssue or KindFollowUp
	Request        string              // a follow-up's request, unchecked text
	RequestURL     string
	CISHA          string // a ci run's failed commit
}

func terminal(state string) bool { return !Unfinished(state) }

// store is the worker's access to the runs table. river inserts the job of a waiting run that
// a finish promotes; only the reading methods work without it.
type store struct {
	pool  *pgxpool.Pool
	river *river.Client[pgx.Tx]
}

func (s store) get(ctx context.Context, id int64) (*run, error) {
	r := &run{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT installation_id, repo_id, owner, repo, issue, labeler, state,
			coalesce(comment_id, 0), attempts, extra_requests, coalesce(base_sha, ''), coalesce(base_branch, ''),
			agent_done_at IS NOT NULL, patch, coalesce(exit_reason, ''), coalesce(steps, 0), coalesce(elapsed_ms, 0),
			coalesce(summary, ''), coalesce(pr_body, ''), coalesce(headline, ''), check_run,
			kind, coalesce(request, ''), coalesce(request_url, ''), coalesce(ci_sha, '')
		FROM runs WHERE id = $1`, id).Scan(
		&r.InstallationID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.Labeler, &r.State,
		&r.CommentID, &r.Attempts, &r.ExtraRequests, &r.BaseSHA, &r.BaseBranch,
		&r.AgentDone, &r.Patch, &r.ExitReason, &r.Steps, &r.ElapsedMS, &r.Summary, &r.PRBody, &r.Headline, &r.Check,
		&r.Kind, &r.Request, &r.RequestURL, &r.CISHA)
	if err != nil {
		return nil, fmt.Errorf("loading run %d: %w", id, err)
	}
	return r, nil
}

func (s store) state(ctx context.Context, id int64) (state string, extra int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT state, extra_requests FROM runs WHERE id = $1`, id).Scan(&state, &extra)
	if err != nil {
		return "", 0, fmt.Errorf("reading state of run %d: %w", id, err)
	}
	return state, extra, nil
}

// start marks the run running unless its installation already has limit
// running runs (busy) or the run is no longer active (started false). The
// count and the update share a transaction-scoped advisory lock per
// installation so that two workers cannot both take the last slot.
func (s store) start(ctx context.Context, r *run, limit int) (started, busy bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('frognano.installation.' || $1::bigint::text, 0))`, r.InstallationID); err != nil {
			return fmt.Errorf("locking installation %d: %w", r.InstallationID, err)
		}
		var running int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE installation_id = $1 AND state = 'running' AND id <> $2`,
			r.InstallationID, r.ID).Scan(&running); err != nil {
			return fmt.Errorf("counting running runs: %w", err)
		}
		if running >= limit {
			busy = true
			return nil
		}
		err := tx.QueryRow(ctx, `UPDATE runs SET state = 'running', started_at = coalesce(started_at, now()), attempts = attempts + 1
			WHERE id = $1 AND state IN ('queued', 'running') RETURNING attempts`, r.ID).Scan(&r.Attempts)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("marking run running: %w", err)
		}
		started = true
		r.State = StateRunning
		return nil
	})
	if err != nil {
		return false, false, fmt.Errorf("starting run %d: %w", r.ID, err)
	}
	return started, busy, nil
}

func (s store) exec(ctx context.Context, what string, sql string, args ...any) error {
	if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (s store) setComment(ctx context.Context, id, commentID int64) error {
	return s.exec(ctx, "saving status comment id", `UPDATE runs SET comment_id = $2 WHERE id = $1`, id, commentID)
}

func (s store) setBase(ctx context.Context, id int64, sha, branch string) error {
	return s.exec(ctx, "saving base commit", `UPDATE runs SET base_sha = $2, base_branch = $3 WHERE id = $1`, id, sha, branch)
}

// saveOutcome keeps the agent's result, so a retry after a failed publish
// does not run the model again. Everything in o came out of the sandbox (or
// was derived from it) and is cleaned to what PostgreSQL accepts.
func (s store) saveOutcome(ctx context.Context, id int64, o *Outcome) error {
	err := s.exec(ctx, "saving agent outcome", `UPDATE runs SET agent_done_at = now(), patch = $2, exit_reason = $3,
			steps = $4, prompt_tokens = $5, completion_tokens = $6, model_ms = $7, tool_ms = $8, test_ms = $9,
			elapsed_ms = $10, trajectory = $11, report = $12, summary = $13, pr_body = $14, headline = $15,
			environment = nullif($16, ''), setup_log = nullif($17, '')
		WHERE id = $1`,
		id, o.Patch, cleanText(o.ExitReason), o.Steps, o.PromptTokens, o.CompletionTokens,
		o.ModelTime.Milliseconds(), o.ToolTime.Milliseconds(), o.TestTime.Milliseconds(), o.Elapsed.Milliseconds(),
		cleanJSON(o.Trajectory), cleanText(o.Report), cleanText(o.Summary), cleanText(o.PRBody), cleanText(o.Headline),
		cleanText(o.Environment), cleanText(o.SetupLog))
	if err != nil || o.Check == nil {
		return err
	}
	check, err := json.Marshal(o.Check)
	if err != nil {
		return fmt.Errorf("encoding the check run: %w", err)
	}
	return s.exec(ctx, "saving the check run", `UPDATE runs SET check_run = $2 WHERE id = $1`, id, cleanJSON(check))
}

// earlierRuns lists, oldest first, one line of fact for each finished run on the pull
// request of follow-up r: the issue's runs and the follow-ups before r. They are found by the
// repository's id: runs stored under the same name may be another repository's (the name
// changed hands), whose headlines must not reach this one's task.
func (s store) earlierRuns(ctx context.Context, r *run, issue int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, state, coalesce(exit_reason, ''), coalesce(headline, '')
		FROM runs WHERE repo_id = $1 AND id < $2 AND state IN ('succeeded', 'failed')
			AND ((kind = 'issue' AND issue = $3) OR (kind IN ('followup', 'ci') AND issue = $4))
		ORDER BY id DESC LIMIT 10`, r.RepoID, r.ID, issue, r.Issue)
	if err != nil {
		return nil, fmt.Errorf("listing earlier runs: %w", err)
	}
	type row struct {
		id                                int64
		kind, state, exitReason, headline string
	}
	list, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (row, error) {
		var x row
		err := cr.Scan(&x.id, &x.kind, &x.state, &x.exitReason, &x.headline)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing earlier runs: %w", err)
	}
	out := make([]string, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		x := list[i]
		what := "the first run, on the issue"
		switch x.kind {
		case KindFollowUp:
			what = "a follow-up"
		case KindCI:
			what = "a follow-up after CI failed"
		}
		line := fmt.Sprintf("Run %d (%s): %s, exit reason %s.", x.id, what, x.state, x.exitReason)
		if x.headline != "" {
			line += " " + x.headline
		}
		out = append(out, line)
	}
	return out, nil
}

// finish moves a running run to a final state and, in the same transaction, promotes the
// oldest run waiting on its pull request (promoteWaiting). It reports false when the run was
// no longer running (for example cancelled by an unlabel meanwhile).
func (s store) finish(ctx context.Context, id int64, state, exitReason, errText, prURL string, prNumber int) (bool, error) {
	return s.end(ctx, fmt.Sprintf("finishing run %d as %s", id, state), `UPDATE runs SET state = $2, finished_at = now(),
			exit_reason = coalesce(nullif($3, ''), exit_reason), error = nullif($4, ''),
			pr_url = nullif($5, ''), pr_number = nullif($6, 0)
		WHERE id = $1 AND state = 'running' RETURNING repo_id, issue`,
		id, state, cleanText(exitReason), cleanText(githubapp.Redact(errText)), prURL, prNumber)
}

// end runs update, which ends an active run and returns its repo_id and issue (no row: the
// run was not active), and promotes the oldest run waiting on its pull request, in one
// transaction. It reports whether update ended the run.
func (s store) end(ctx context.Context, what, update string, args ...any) (bool, error) {
	ended := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ended = false
		var repoID int64
		var issue int
		err := tx.QueryRow(ctx, update, args...).Scan(&repoID, &issue)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ended = true
		_, err = promoteWaiting(ctx, tx, s.river, repoID, issue)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return ended, nil
}

// requeue puts a running run back to queued (a retry or a shutdown).
func (s store) requeue(ctx context.Context, id int64, errText string) error {
	return s.exec(ctx, "requeueing run", `UPDATE runs SET state = 'queued', error = nullif($2, '')
		WHERE id = $1 AND state = 'running'`, id, cleanText(githubapp.Redact(errText)))
}

// cancel marks an active run cancelled (used when River cancelled the job
// before the webhook transaction's update was seen, or by the worker) and promotes the run
// waiting next on its pull request, like finish.
func (s store) cancel(ctx context.Context, id int64) error {
	_, err := s.end(ctx, "cancelling run", `UPDATE runs SET state = 'cancelled', finished_at = now(),
			exit_reason = coalesce(exit_reason, 'cancelled')
		WHERE id = $1 AND state IN ('queued', 'running') RETURNING repo_id, issue`, id)
	return err
}

// cleanText makes s storable as PostgreSQL text: valid UTF-8 without NUL.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// cleanJSON makes b storable as jsonb: nil when it is not valid JSON, and
// with every \u0000 escape (which jsonb rejects) replaced by \ufffd.
func cleanJSON(b []byte) []byte {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case escaped:
			escaped = false
			if c == 'u' && i+4 < len(b) && string(b[i+1:i+5]) == "0000" {
				out = append(out, "ufffd"...)
				i += 4
				continue
			}
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		out = append(out, c)
	}
	return out
}
