package run

import (
	"context"
	"fmt"
	"time"
)

// Ways UsageReport groups runs (`frognano usage --by`).
const (
	ByInstallation = "installation"
	ByRepository   = "repository"
	ByPerson       = "person"
	ByModel        = "model" // the operator's name of the model that wrote the patch ("-": none recorded)
)

// UsageRow is what the runs of one installation, repository or person used.
type UsageRow struct {
	Key                                   string // the installation's id, "owner/name", the login, or the model's name
	Runs                                  int64  // runs created since the date (any state)
	Started                               int64  // of which passed their check (counted by the budgets)
	PromptTokens, CompletionTokens        int64
	CachedTokens                          int64
	ModelMS, ToolMS, TestMS, SandboxCPUMS int64
	SandboxPeakBytes                      int64 // the highest of one sandbox
}

// UsageReport sums the usage of the runs created at or after since, grouped by by
// (ByInstallation, ByRepository, ByPerson or ByModel), the largest token use first. A repository is
// named by its latest name among the runs; a person by their login, case folded.
func (s *Store) UsageReport(ctx context.Context, since time.Time, by string) ([]UsageRow, error) {
	var key string
	switch by {
	case ByInstallation:
		key = "installation_id::text"
	case ByRepository:
		key = "repo_id::text"
	case ByPerson:
		key = "lower(labeler)"
	case ByModel:
		key = "coalesce(model, '-')"
	default:
		return nil, fmt.Errorf("usage by %q: not installation, repository, person or model", by)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+key+` AS k,
			(array_agg(owner || '/' || repo ORDER BY id DESC))[1],
			count(*), count(checked_at),
			coalesce(sum(prompt_tokens), 0)::bigint, coalesce(sum(completion_tokens), 0)::bigint, coalesce(sum(cached_tokens), 0)::bigint,
			coalesce(sum(model_ms), 0)::bigint, coalesce(sum(tool_ms), 0)::bigint, coalesce(sum(test_ms), 0)::bigint,
			coalesce(sum(sandbox_cpu_ms), 0)::bigint, coalesce(max(sandbox_peak_bytes), 0)::bigint
		FROM runs WHERE created_at >= $1 GROUP BY k
		ORDER BY coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0) DESC, k`, since)
	if err != nil {
		return nil, fmt.Errorf("summing usage: %w", err)
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var u UsageRow
		var name string
		if err := rows.Scan(&u.Key, &name, &u.Runs, &u.Started, &u.PromptTokens, &u.CompletionTokens, &u.CachedTokens,
			&u.ModelMS, &u.ToolMS, &u.TestMS, &u.SandboxCPUMS, &u.SandboxPeakBytes); err != nil {
			return nil, fmt.Errorf("summing usage: %w", err)
		}
		if by == ByRepository {
			u.Key = name
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// BudgetOverride is an installation's row of the budgets table: nil fields take the
// FROGNANO_BUDGET_* setting, 0 is no limit.
type BudgetOverride struct {
	InstallationRuns, InstallationTokens, RepoRuns, RepoTokens *int64
	UpdatedAt                                                  time.Time
}

// SetBudget sets installation's override (`frognano budget set`): the fields set in o replace
// the stored ones, the others stay. Every worker reads it at the next run's check.
func (s *Store) SetBudget(ctx context.Context, installation int64, o BudgetOverride) error {
	return s.exec(ctx, fmt.Sprintf("setting the budgets of installation %d", installation), `INSERT INTO budgets
			(installation_id, runs_per_day, tokens_per_day, repo_runs_per_day, repo_tokens_per_day)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (installation_id) DO UPDATE SET
			runs_per_day = coalesce(EXCLUDED.runs_per_day, budgets.runs_per_day),
			tokens_per_day = coalesce(EXCLUDED.tokens_per_day, budgets.tokens_per_day),
			repo_runs_per_day = coalesce(EXCLUDED.repo_runs_per_day, budgets.repo_runs_per_day),
			repo_tokens_per_day = coalesce(EXCLUDED.repo_tokens_per_day, budgets.repo_tokens_per_day),
			updated_at = now()`,
		installation, o.InstallationRuns, o.InstallationTokens, o.RepoRuns, o.RepoTokens)
}

// ClearBudget removes installation's override: the settings apply again.
func (s *Store) ClearBudget(ctx context.Context, installation int64) error {
	return s.exec(ctx, "clearing a budget", `DELETE FROM budgets WHERE installation_id = $1`, installation)
}

// Budget returns installation's budgets as a check would apply them with the settings def, and
// its override (nil: none).
func (s *Store) Budget(ctx context.Context, installation int64, def Budgets) (Budgets, *BudgetOverride, error) {
	b, over, err := effectiveBudgets(ctx, s.pool, installation, def)
	if err != nil || over == (overridden{}) {
		return b, nil, err
	}
	o := &BudgetOverride{}
	err = s.pool.QueryRow(ctx, `SELECT runs_per_day::bigint, tokens_per_day, repo_runs_per_day::bigint, repo_tokens_per_day, updated_at
		FROM budgets WHERE installation_id = $1`, installation).Scan(&o.InstallationRuns, &o.InstallationTokens, &o.RepoRuns, &o.RepoTokens, &o.UpdatedAt)
	if err != nil {
		return b, nil, fmt.Errorf("reading the budgets of installation %d: %w", installation, err)
	}
	return b, o, nil
}
