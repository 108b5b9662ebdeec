package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
)

// Store is the access to the runs table, and its only writer: the pipeline's updates as a run
// goes (this file, store_end.go, store_followup.go), the writes the queue makes in transactions
// of its own (store_queue.go), and the reading methods of Reader. Every method is one statement
// or one transaction, or takes the caller's transaction. No other file of the module holds SQL
// that writes runs (internal/layout checks it).
type Store struct {
	pool    *pgxpool.Pool
	promote Promote
	deliver Deliver // nil: the queue's cleanup finds the outboxes left (outbox.go)
	// published records what a succeeded run published (package outcome); nil: nothing.
	published Published
	budgets   Budgets // the FROGNANO_BUDGET_* settings (budget.go)
}

// Promote makes the oldest run waiting on the pull request of run ended queued and inserts its
// job, in tx, which has just ended that run through s; it returns the promoted run's id, 0 when
// none waited. The queue owns the waiting runs and their jobs (queue/waiting.go), and the wake
// of the parked runs of ended's installation that it does there too (queue/parked.go): it
// inserts River's jobs, and writes the runs only through s (PromoteWaiting, LinkJob, Wake). A
// Store only calls it.
type Promote func(ctx context.Context, tx pgx.Tx, s *Store, ended Ended) (int64, error)

// NewStore returns the Store of the runs in pool. promote is called by every end of an active
// run; nil makes a Store for reading (the run pages, `frognano runs`) whose ends fail; its
// methods that take the caller's transaction work as well.
func NewStore(pool *pgxpool.Pool, promote Promote) *Store {
	return &Store{pool: pool, promote: promote}
}

// load reads run id as the pipeline sees it.
func (s *Store) load(ctx context.Context, id int64) (*row, error) {
	r := &row{ID: id}
	var refused string
	err := s.pool.QueryRow(ctx, `SELECT installation_id, repo_id, owner, repo, issue, labeler, state,
			coalesce(comment_id, 0), attempts, extra_requests, coalesce(base_sha, ''), coalesce(base_branch, ''),
			agent_done_at IS NOT NULL, patch, coalesce(exit_reason, ''), coalesce(steps, 0), coalesce(elapsed_ms, 0),
			coalesce(summary, ''), coalesce(pr_body, ''), coalesce(headline, ''), check_run,
			kind, coalesce(request, ''), coalesce(request_url, ''), coalesce(ci_sha, ''), coalesce(no_patch, ''),
			coalesce(trigger, ''), coalesce(asked_base, ''), coalesce(asked_attempts, 0), coalesce(asked_model, ''), coalesce(token_id, 0),
			coalesce(trigger_label, ''), coalesce(asked_refused, '')
		FROM runs WHERE id = $1`, id).Scan(
		&r.InstallationID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.Labeler, &r.State,
		&r.CommentID, &r.Attempts, &r.ExtraRequests, &r.BaseSHA, &r.BaseBranch,
		&r.AgentDone, &r.Patch, &r.ExitReason, &r.Steps, &r.ElapsedMS, &r.Summary, &r.PRBody, &r.Headline, &r.Check,
		&r.Kind, &r.Request, &r.RequestURL, &r.CISHA, &r.NoPatch,
		&r.Trigger, &r.Asked.Base, &r.Asked.Attempts, &r.Asked.Model, &r.TokenID, &r.TriggerLabel, &refused)
	if err != nil {
		return nil, fmt.Errorf("loading run %d: %w", id, err)
	}
	r.Asked.Refused = refusedFrom(refused)
	return r, nil
}

// current reads run id's state and the requests counted on it.
func (s *Store) current(ctx context.Context, id int64) (state string, extra int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT state, extra_requests FROM runs WHERE id = $1`, id).Scan(&state, &extra)
	if err != nil {
		return "", 0, fmt.Errorf("reading state of run %d: %w", id, err)
	}
	return state, extra, nil
}

// start marks the run running unless the run is no longer active (started false) or its
// installation already has limit running runs: then it parks the run (busy): the run stays
// queued with parked_at set, its job ends, and the queue wakes it with a new job when a slot
// frees (queue/parked.go). The run's row is locked first and the installation's advisory lock
// after it, the order of every transaction that frees a slot and wakes a parked run: the count
// and the update or park cannot interleave with a wake, so two workers never take the last
// slot and a run parked while a slot frees is seen by that slot's wake.
func (s *Store) start(ctx context.Context, r *row, limit int) (started, busy bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1 FOR UPDATE`, r.ID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && state != StateQueued && state != StateRunning {
			return nil
		}
		if err != nil {
			return fmt.Errorf("locking run: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('frognano.installation.' || $1::bigint::text, 0))`, r.InstallationID); err != nil {
			return fmt.Errorf("locking installation %d: %w", r.InstallationID, err)
		}
		var running int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs WHERE installation_id = $1 AND state = 'running' AND id <> $2`,
			r.InstallationID, r.ID).Scan(&running); err != nil {
			return fmt.Errorf("counting running runs: %w", err)
		}
		if running >= limit {
			// A run found running here is one whose worker died (its job was rescued): parked, it
			// no longer holds a slot it does not use.
			if _, err := tx.Exec(ctx, `UPDATE runs SET state = 'queued', parked_at = coalesce(parked_at, now()) WHERE id = $1`, r.ID); err != nil {
				return fmt.Errorf("parking run: %w", err)
			}
			busy, r.State = true, StateQueued
			return nil
		}
		if err := tx.QueryRow(ctx, `UPDATE runs SET state = 'running', parked_at = NULL, started_at = coalesce(started_at, now()), attempts = attempts + 1
			WHERE id = $1 RETURNING attempts`, r.ID).Scan(&r.Attempts); err != nil {
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

func (s *Store) exec(ctx context.Context, what string, sql string, args ...any) error {
	if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// tokenLive reports whether API token id exists and is not revoked (the api package writes
// api_tokens; a run only reads whether the token that asked for it still may).
func (s *Store) tokenLive(ctx context.Context, id int64) (bool, error) {
	var live bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_tokens WHERE id = $1 AND revoked_at IS NULL)`, id).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("checking API token %d: %w", id, err)
	}
	return live, nil
}

func (s *Store) setComment(ctx context.Context, id, commentID int64) error {
	return s.exec(ctx, "saving status comment id", `UPDATE runs SET comment_id = $2 WHERE id = $1`, id, commentID)
}

func (s *Store) setBase(ctx context.Context, id int64, sha, branch string) error {
	return s.exec(ctx, "saving base commit", `UPDATE runs SET base_sha = $2, base_branch = $3 WHERE id = $1`, id, sha, branch)
}

// saveOutcome keeps the agent's result, so a retry after a failed publish
// does not run the model again. Everything in o came out of the sandbox (or
// was derived from it) and is cleaned to what PostgreSQL accepts.
func (s *Store) saveOutcome(ctx context.Context, id int64, o *Outcome) error {
	err := s.exec(ctx, "saving agent outcome", `UPDATE runs SET agent_done_at = now(), patch = $2, exit_reason = $3,
			steps = $4, prompt_tokens = $5, completion_tokens = $6, model_ms = $7, tool_ms = $8, test_ms = $9,
			elapsed_ms = $10, trajectory = $11, report = $12, summary = $13, pr_body = $14, headline = $15,
			environment = nullif($16, ''), setup_log = nullif($17, ''), no_patch = nullif($18, ''),
			cached_tokens = $19, sandbox_cpu_ms = $20, sandbox_peak_bytes = $21, agent_attempts = nullif($22, 0),
			model = nullif($23, '')
		WHERE id = $1`,
		id, o.Patch, CleanText(o.ExitReason), o.Steps, o.PromptTokens, o.CompletionTokens,
		o.ModelTime.Milliseconds(), o.ToolTime.Milliseconds(), o.TestTime.Milliseconds(), o.Elapsed.Milliseconds(),
		cleanJSON(o.Trajectory), CleanText(o.Report), CleanText(o.Summary), CleanText(o.PRBody), CleanText(o.Headline),
		CleanText(o.Environment), CleanText(o.SetupLog), CleanText(o.NoPatch),
		o.CachedTokens, o.SandboxCPU.Milliseconds(), o.SandboxPeak, o.AgentAttempts, CleanText(o.Model))
	if err != nil || o.Check == nil {
		return err
	}
	check, err := json.Marshal(o.Check)
	if err != nil {
		return fmt.Errorf("encoding the check run: %w", err)
	}
	return s.exec(ctx, "saving the check run", `UPDATE runs SET check_run = $2 WHERE id = $1`, id, cleanJSON(check))
}

// requeue puts a running run back to queued (a retry or a shutdown).
func (s *Store) requeue(ctx context.Context, id int64, errText string) error {
	return s.exec(ctx, "requeueing run", `UPDATE runs SET state = 'queued', error = nullif($2, '')
		WHERE id = $1 AND state = 'running'`, id, CleanText(githubapp.RedactRun(errText)))
}

// pass records that running run r passed its check (the requester may write, or the CI
// follow-up may go ahead) and, when r is a run that waited, folds the runs still waiting on its
// pull request into it, in one transaction (the rules are queue/waiting.go's). It returns
// errRunCancelled when the run is no longer running.
func (s *Store) pass(ctx context.Context, r *row, repoRuns int64) error {
	var spent *BudgetExceeded
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A run past a budget does not pass (budget.go).
		var err error
		if spent, err = s.overBudget(ctx, tx, r.ID, r.InstallationID, r.RepoID, repoRuns); err != nil || spent != nil {
			return err
		}
		var repoID int64
		var waited bool
		err = tx.QueryRow(ctx, `UPDATE runs SET checked_at = coalesce(checked_at, now())
			WHERE id = $1 AND state = 'running' RETURNING repo_id, promoted_at IS NOT NULL`, r.ID).Scan(&repoID, &waited)
		if errors.Is(err, pgx.ErrNoRows) {
			return errRunCancelled
		}
		if err != nil {
			return fmt.Errorf("recording that the run passed its check: %w", err)
		}
		if !waited {
			return nil
		}
		// A folded run brings the requests counted on it.
		return tx.QueryRow(ctx, `WITH f AS (
				UPDATE runs SET state = 'skipped', finished_at = now(), exit_reason = 'folded',
					error = 'counted on run ' || $1::bigint || ', which waited before it and went ahead'
				WHERE repo_id = $2 AND issue = $3 AND state = 'waiting' RETURNING 1 + extra_requests AS n
			)
			UPDATE runs SET extra_requests = extra_requests + (SELECT coalesce(sum(n), 0) FROM f) WHERE id = $1
			RETURNING extra_requests`, r.ID, repoID, r.Issue).Scan(&r.ExtraRequests)
	})
	if err != nil && !errors.Is(err, errRunCancelled) {
		return fmt.Errorf("passing run %d: %w", r.ID, err)
	}
	if err == nil && spent != nil {
		return spent
	}
	return err
}
