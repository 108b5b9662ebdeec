package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reader is what the run pages (web) and `frognano runs` read of runs: a *Store (NewStore with
// a nil Promote) is one. Every text it returns was redacted when it was written, and is still
// untrusted.
type Reader interface {
	// Runs returns the newest runs matching f first.
	Runs(ctx context.Context, f Filter) ([]Record, error)
	// Run returns one run with its report, trajectory, patch, environment and setup log;
	// ErrNoRun (wrapped) when it does not exist.
	Run(ctx context.Context, id int64) (Record, error)
	// Facts returns what the run page shows of run id besides its Record.
	Facts(ctx context.Context, id int64) (Facts, error)
	// State returns run id's state; ErrNoRun (wrapped) when it does not exist.
	State(ctx context.Context, id int64) (string, error)
	// Events returns run id's events with an id above after, oldest first, at most
	// MaxEventsRead.
	Events(ctx context.Context, id, after int64) ([]Event, error)
	// Audit returns run id's audit trail (audit.go), oldest first.
	Audit(ctx context.Context, id int64) ([]AuditEntry, error)
}

var _ Reader = (*Store)(nil)

// Record is one run as kept in Postgres, for operators (`frognano runs`) and the run pages.
type Record struct {
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
	// Usage is the rest of what the run used (issue 22); Kind, Trigger and StoppedBy say who
	// started it (Labeler: the labeller, the mention's or follow-up's author, the App for CI),
	// how, and who stopped it.
	Usage     RunUsage
	Kind      string
	StoppedBy string
	// InstallationID is the installation the run was asked for in (an API token's scope);
	// Trigger how it was asked for (Trigger*; "" before it was kept) and TokenID the API token
	// that asked (0: none).
	InstallationID int64
	Trigger        string
	TokenID        int64
	// PRNumber is the pull request the run published to (runs.pr_number; 0: none), the key,
	// with RepoID, of what became of it (pull_outcomes).
	PRNumber int
}

const runColumns = `id, repo_id, owner, repo, issue, labeler, state, attempts, created_at, started_at, finished_at,
	coalesce(exit_reason, ''), coalesce(pr_url, ''), coalesce(error, ''), coalesce(steps, 0),
	coalesce(prompt_tokens, 0), coalesce(completion_tokens, 0), coalesce(elapsed_ms, 0),
	coalesce(cached_tokens, 0), coalesce(model_ms, 0), coalesce(tool_ms, 0), coalesce(test_ms, 0),
	coalesce(sandbox_cpu_ms, 0), coalesce(sandbox_peak_bytes, 0), coalesce(agent_attempts, 0), kind, coalesce(stopped_by, ''),
	installation_id, coalesce(trigger, ''), coalesce(token_id, 0), coalesce(model, ''), coalesce(pr_number, 0)`

func scanRun(row pgx.Row, extra ...any) (Record, error) {
	var r Record
	dest := append([]any{&r.ID, &r.RepoID, &r.Owner, &r.Repo, &r.Issue, &r.Labeler, &r.State, &r.Attempts, &r.CreatedAt,
		&r.StartedAt, &r.FinishedAt, &r.ExitReason, &r.PRURL, &r.Error, &r.Steps,
		&r.PromptTokens, &r.CompletionTokens, &r.ElapsedMS,
		&r.Usage.CachedTokens, &r.Usage.ModelMS, &r.Usage.ToolMS, &r.Usage.TestMS,
		&r.Usage.SandboxCPUMS, &r.Usage.SandboxPeakBytes, &r.Usage.AgentAttempts, &r.Kind, &r.StoppedBy,
		&r.InstallationID, &r.Trigger, &r.TokenID, &r.Usage.Model, &r.PRNumber}, extra...)
	err := row.Scan(dest...)
	return r, err
}

// ErrNoRun is returned by Run and State for an id that does not exist.
var ErrNoRun = errors.New("no such run")

// Run returns one run with its report, trajectory, patch, environment and setup log.
func (s *Store) Run(ctx context.Context, id int64) (Record, error) {
	var report *string
	var traj, patch []byte
	var environment, setupLog string
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runColumns+`, report, trajectory, patch,
			coalesce(environment, ''), coalesce(setup_log, '') FROM runs WHERE id = $1`, id),
		&report, &traj, &patch, &environment, &setupLog)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return Record{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	if report != nil {
		r.Report = *report
	}
	r.Trajectory, r.Patch = traj, patch
	r.Environment, r.SetupLog = environment, setupLog
	return r, nil
}

// Event is one row of run_events. Data is untrusted text, redacted when written.
type Event struct {
	ID    int64
	RunID int64
	At    time.Time
	Kind  string
	Data  json.RawMessage
}

// MaxEventsRead bounds one Events answer; a reader pages on with the last id.
const MaxEventsRead = 500

// Events returns run id's events with an id above after, oldest first, at most MaxEventsRead.
func (s *Store) Events(ctx context.Context, id, after int64) ([]Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, run_id, at, kind, data FROM run_events
		WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`, id, after, MaxEventsRead)
	if err != nil {
		return nil, fmt.Errorf("listing the events of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.ID, &e.RunID, &e.At, &e.Kind, &e.Data); err != nil {
			return nil, fmt.Errorf("reading an event of run %d: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Filter selects runs for Runs; zero fields select everything.
type Filter struct {
	// RepoID selects a repository by GitHub's id, whatever its name was when each run was
	// asked for.
	RepoID int64
	// Owner and Repo select by the name a run was asked for (both, or neither): runs of
	// different repositories when a name changed hands, so never a reason to show a run.
	Owner, Repo string
	State       string
	Limit       int // at most this many (required)
}

// Runs returns the newest runs matching f first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runColumns+` FROM runs
		WHERE ($1 = '' OR (lower(owner) = lower($1) AND lower(repo) = lower($2))) AND ($3 = '' OR state = $3)
			AND ($5 = 0 OR repo_id = $5)
		ORDER BY id DESC LIMIT $4`, f.Owner, f.Repo, f.State, f.Limit, f.RepoID)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("reading a run: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Facts is what the run page shows besides the Record.
type Facts struct {
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

// Facts returns run id's kind, request, headline and times (the agent's, its promotion and
// its check).
func (s *Store) Facts(ctx context.Context, id int64) (Facts, error) {
	var f Facts
	err := s.pool.QueryRow(ctx, `SELECT kind, coalesce(request, ''), coalesce(headline, ''), coalesce(pr_number, 0),
		coalesce(model_ms, 0), coalesce(tool_ms, 0), coalesce(test_ms, 0), promoted_at, checked_at,
		state = 'cancelled' AND kind <> 'issue' AND job_id IS NULL AND promoted_at IS NULL FROM runs WHERE id = $1`, id).Scan(
		&f.Kind, &f.Request, &f.Headline, &f.PRNumber, &f.ModelMS, &f.ToolMS, &f.TestMS, &f.PromotedAt, &f.CheckedAt, &f.WaitedOnly)
	if err != nil {
		return Facts{}, fmt.Errorf("reading run %d: %w", id, err)
	}
	return f, nil
}

// State returns run id's state; ErrNoRun (wrapped) when it does not exist.
func (s *Store) State(ctx context.Context, id int64) (string, error) {
	var state string
	err := s.pool.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1`, id).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("run %d: %w", id, ErrNoRun)
	}
	if err != nil {
		return "", fmt.Errorf("reading the state of run %d: %w", id, err)
	}
	return state, nil
}
