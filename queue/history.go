package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RunRecord is one run as kept in Postgres, for operators (`frognano runs`).
type RunRecord struct {
	ID int64
	// RepoID is GitHub's id of the run's repository: what decides who may see the run. Owner
	// and Repo are its name when the run was asked for, which a rename or a deletion can give
	// to another repository.
	RepoID                         int64
	Owner, Repo                    string
	Issue                          int
	Labeler, State                 string
	Attempts                       int
	CreatedAt                      time.Time
	StartedAt, FinishedAt          *time.Time
	ExitReason, PRURL, Error       string
	Steps                          int
	PromptTokens, CompletionTokens int64
	ElapsedMS                      int64
	Report                         string // rendered report.md
	Trajectory                     []byte // JSON, nil until the agent finished
	Patch                          []byte
	Environment                    string // the image the run's sandboxes came from, and how
	SetupLog                       string // the setup script's output when this run ran it
}

const runColumns = `id, repo_id, owner, repo, issue, labeler, state, attempts, created_at, started_at, finished_at,
	coalesce(exit_reason, ''), coalesce(pr_url, ''), coalesce(error, ''), coalesce(steps, 0),
	coalesce(prompt_tokens, 0), coalesce(completion_tokens, 0), coalesce(elapsed_ms, 0)`

func scanRun(row pgx.Row, extra ...any) (RunRecord, error) {
	var r RunRecord
	dest := append([]any{&r.ID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.Labeler, &r.State, &r.Attempts, &r.CreatedAt,
		&r.StartedAt, &r.FinishedAt, &r.ExitReason, &r.PRURL, &r.Error, &r.Steps,
		&r.PromptTokens, &r.CompletionTokens, &r.ElapsedMS}, extra...)
	err := row.Scan(dest...)
	return r, err
}

// ListRuns returns the newest runs first, at most limit: ListRunsWhere without a filter.
func ListRuns(ctx context.Context, pool *pgxpool.Pool, limit int) ([]RunRecord, error) {
	return ListRunsWhere(ctx, pool, RunFilter{Limit: limit})
}

// ErrNoRun is returned by GetRun for an id that does not exist.
var ErrNoRun = errors.New("no such run")

// GetRun returns one run with its report, trajectory, patch, environment and setup log.
func GetRun(ctx context.Context, pool *pgxpool.Pool, id int64) (RunRecord, error) {
	var report *string
	var traj, patch []byte
	var environment, setupLog string
	r, err := scanRun(pool.QueryRow(ctx, `SELECT `+runColumns+`, report, trajectory, patch,
			coalesce(environment, ''), coalesce(setup_log, '') FROM runs WHERE id = $1`, id),
		&report, &traj, &patch, &environment, &setupLog)
	if errors.Is(err, pgx.ErrNoRows) {
		return RunRecord{}, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return RunRecord{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	if report != nil {
		r.Report = *report
	}
	r.Trajectory, r.Patch = traj, patch
	r.Environment, r.SetupLog = environment, setupLog
	return r, nil
}
