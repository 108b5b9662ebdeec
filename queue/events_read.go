package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RunEvent is one row of run_events. Data is untrusted text, redacted when written.
type RunEvent struct {
	ID    int64
	RunID int64
	At    time.Time
	Kind  string
	Data  json.RawMessage
}

// MaxEventsRead bounds one ListRunEvents answer; a reader pages on with the last id.
const MaxEventsRead = 500

// ListRunEvents returns run id's events with an id above after, oldest first, at most
// MaxEventsRead.
func ListRunEvents(ctx context.Context, pool *pgxpool.Pool, id, after int64) ([]RunEvent, error) {
	rows, err := pool.Query(ctx, `SELECT id, run_id, at, kind, data FROM run_events
		WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`, id, after, MaxEventsRead)
	if err != nil {
		return nil, fmt.Errorf("listing the events of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []RunEvent
	for rows.Next() {
		var e RunEvent
		if err := rows.Scan(&e.ID, &e.RunID, &e.At, &e.Kind, &e.Data); err != nil {
			return nil, fmt.Errorf("reading an event of run %d: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// RunFilter selects runs for ListRunsWhere; zero fields select everything.
type RunFilter struct {
	// RepoID selects a repository by GitHub's id, whatever its name was when each run was
	// asked for.
	RepoID int64
	// Owner and Repo select by the name a run was asked for (both, or neither): runs of
	// different repositories when a name changed hands, so never a reason to show a run.
	Owner, Repo string
	State       string
	Limit       int // at most this many (required)
}

// ListRunsWhere returns the newest runs matching f first.
func ListRunsWhere(ctx context.Context, pool *pgxpool.Pool, f RunFilter) ([]RunRecord, error) {
	rows, err := pool.Query(ctx, `SELECT `+runColumns+` FROM runs
		WHERE ($1 = '' OR (lower(owner) = lower($1) AND lower(repo) = lower($2))) AND ($3 = '' OR state = $3)
			AND ($5 = 0 OR repo_id = $5)
		ORDER BY id DESC LIMIT $4`, f.Owner, f.Repo, f.State, f.Limit, f.RepoID)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("reading a run: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunFacts is what the run page shows besides the RunRecord.
type RunFacts struct {
	Kind                    string // KindIssue, KindFollowUp or KindCI
	Request                 string // a follow-up's request (unchecked text)
	Headline                string
	PRNumber                int
	ModelMS, ToolMS, TestMS int64
	// PromotedAt is when a run that waited for its pull request's active run became queued
	// (nil: it never waited, or still waits); CheckedAt when the worker found it may go ahead.
	PromotedAt, CheckedAt *time.Time
	// WaitedOnly: the run waited and was cancelled before it was ever queued (a stop, a
	// close or an uninstall while it waited).
	WaitedOnly bool
}

// GetRunFacts returns run id's kind, request, headline and times (the agent's, its promotion
// and its check).
func GetRunFacts(ctx context.Context, pool *pgxpool.Pool, id int64) (RunFacts, error) {
	var f RunFacts
	err := pool.QueryRow(ctx, `SELECT kind, coalesce(request, ''), coalesce(headline, ''), coalesce(pr_number, 0),
		coalesce(model_ms, 0), coalesce(tool_ms, 0), coalesce(test_ms, 0), promoted_at, checked_at,
		state = 'cancelled' AND kind <> 'issue' AND job_id IS NULL AND promoted_at IS NULL FROM runs WHERE id = $1`, id).Scan(
		&f.Kind, &f.Request, &f.Headline, &f.PRNumber, &f.ModelMS, &f.ToolMS, &f.TestMS, &f.PromotedAt, &f.CheckedAt, &f.WaitedOnly)
	if err != nil {
		return RunFacts{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	return f, nil
}

// GetRunState returns run id's state; ErrNoRun (wrapped) when it does not exist.
func GetRunState(ctx context.Context, pool *pgxpool.Pool, id int64) (string, error) {
	var state string
	err := pool.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return "", fmt.Errorf("reading the state of run %d: %w", id, err)
	}
	return state, nil
}
