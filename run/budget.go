package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Budgets cap what the runs of one installation, and of each of its repositories, may use in a
// UTC day (issue 22): how many runs may pass their check, and how many tokens (prompt plus
// completion) the runs that passed it that day may have used. 0: no limit. The operator's
// FROGNANO_BUDGET_* settings give them; a row of the budgets table (`frognano budget set`)
// overrides them for one installation, read at every check, so a change needs no restart.
//
// The day is the UTC calendar day: every budget resets at 00:00 UTC. A run is counted when it
// passes its check (the requester may write; checked_at), under the installation's advisory
// lock that start takes, so every worker sharing the database counts the same runs and two
// cannot both take the last one. A run past a budget never starts its agent: it ends as
// skipped (exit reason ExitBudget) with one comment that says which budget and when it resets,
// posted through the run's outbox (outbox.go), and an issue's label is removed, so relabelling
// makes a new run that is checked again. Who asks does not matter: a person labelling many
// issues at once is held to the same count.
type Budgets struct {
	InstallationRuns, InstallationTokens int64
	RepoRuns, RepoTokens                 int64
}

// ExitBudget is the exit reason of a run that found a budget spent.
const ExitBudget = "budget"

// BudgetExceeded says which budget a run found spent.
type BudgetExceeded struct {
	Scope   string // budgetInstallation or budgetRepository
	What    string // budgetRuns or budgetTokens
	Limit   int64
	Used    int64
	Setting string    // the FROGNANO_BUDGET_* setting, or budgetSetByOperator
	Resets  time.Time // the next 00:00 UTC
}

func (e *BudgetExceeded) Error() string {
	return fmt.Sprintf("the %s's budget of %d %s a day is spent (%d today; %s); it resets at %s",
		e.Scope, e.Limit, e.What, e.Used, e.Setting, e.Resets.UTC().Format("2006-01-02 15:04 MST"))
}

// Budget settings, as documented in docs/configuration.md.
const (
	EnvBudgetInstallationRuns   = "FROGNANO_BUDGET_INSTALLATION_RUNS_PER_DAY"
	EnvBudgetInstallationTokens = "FROGNANO_BUDGET_INSTALLATION_TOKENS_PER_DAY"
	EnvBudgetRepoRuns           = "FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY"
	EnvBudgetRepoTokens         = "FROGNANO_BUDGET_REPOSITORY_TOKENS_PER_DAY"
)

// WithBudgets makes s hold every run it checks to b (and the overrides in the budgets table);
// it returns s.
func (s *Store) WithBudgets(b Budgets) *Store {
	s.budgets = b
	return s
}

// overBudget, in tx, checks run id of installation and repoID against the budgets before it
// passes its check: nil when it may go ahead (or passed it already, on an earlier attempt). It
// locks the run's row, then the installation's advisory lock (the order of start).
// repoRuns is the repository's own cap on its runs per day (runs_per_day of its settings
// file; 0: none): it applies when it is below the operator's.
func (s *Store) overBudget(ctx context.Context, tx pgx.Tx, id, installation, repoID, repoRuns int64) (*BudgetExceeded, error) {
	var checked bool
	if err := tx.QueryRow(ctx, `SELECT checked_at IS NOT NULL FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&checked); err != nil {
		return nil, fmt.Errorf("locking run: %w", err)
	}
	if checked {
		return nil, nil
	}
	b, over, err := effectiveBudgets(ctx, tx, installation, s.budgets)
	if err != nil {
		return nil, err
	}
	repoSetting := "`" + EnvBudgetRepoRuns + "`"
	if over.RepoRuns {
		repoSetting = budgetSetByOperator
	}
	if repoRuns > 0 && (b.RepoRuns == 0 || repoRuns < b.RepoRuns) {
		b.RepoRuns, repoSetting = repoRuns, budgetSetBySettings
	}
	if b == (Budgets{}) {
		return nil, nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('frognano.installation.' || $1::bigint::text, 0))`, installation); err != nil {
		return nil, fmt.Errorf("locking installation %d: %w", installation, err)
	}
	var since time.Time
	var runs, tokens, usedRepoRuns, repoTokens int64
	err = tx.QueryRow(ctx, `WITH d AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS since)
		SELECT d.since, count(r.id), coalesce(sum(coalesce(r.prompt_tokens, 0) + coalesce(r.completion_tokens, 0)), 0)::bigint,
			count(r.id) FILTER (WHERE r.repo_id = $2),
			coalesce(sum(coalesce(r.prompt_tokens, 0) + coalesce(r.completion_tokens, 0)) FILTER (WHERE r.repo_id = $2), 0)::bigint
		FROM d LEFT JOIN runs r ON r.installation_id = $1 AND r.checked_at >= d.since AND r.id <> $3
		GROUP BY d.since`, installation, repoID, id).Scan(&since, &runs, &tokens, &usedRepoRuns, &repoTokens)
	if err != nil {
		return nil, fmt.Errorf("counting today's runs of installation %d: %w", installation, err)
	}
	resets := since.Add(24 * time.Hour)
	setting := func(env string, overridden bool) string {
		if overridden {
			return budgetSetByOperator
		}
		return "`" + env + "`"
	}
	for _, c := range []struct {
		scope, what string
		limit, used int64
		setting     string
	}{
		{budgetInstallation, budgetRuns, b.InstallationRuns, runs, setting(EnvBudgetInstallationRuns, over.InstallationRuns)},
		{budgetInstallation, budgetTokens, b.InstallationTokens, tokens, setting(EnvBudgetInstallationTokens, over.InstallationTokens)},
		{budgetRepository, budgetRuns, b.RepoRuns, usedRepoRuns, repoSetting},
		{budgetRepository, budgetTokens, b.RepoTokens, repoTokens, setting(EnvBudgetRepoTokens, over.RepoTokens)},
	} {
		if c.limit > 0 && c.used >= c.limit {
			return &BudgetExceeded{Scope: c.scope, What: c.what, Limit: c.limit, Used: c.used, Setting: c.setting, Resets: resets}, nil
		}
	}
	return nil, nil
}

// overridden says which budgets an installation's row in the budgets table set.
type overridden struct{ InstallationRuns, InstallationTokens, RepoRuns, RepoTokens bool }

// effectiveBudgets is def with the installation's overrides (the budgets table) applied.
// repoRunsBudget is the runs per repository and UTC day the operator allows installation: its
// own budget (`frognano budget set --repo-runs`), else def (FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY);
// 0 is none. It is the ceiling of a settings file's runs_per_day.
func (s *Store) repoRunsBudget(ctx context.Context, installation, def int64) (int64, error) {
	b, _, err := effectiveBudgets(ctx, s.pool, installation, Budgets{RepoRuns: def})
	return b.RepoRuns, err
}

func effectiveBudgets(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, installation int64, def Budgets) (Budgets, overridden, error) {
	var runs, tokens, repoRuns, repoTokens *int64
	err := q.QueryRow(ctx, `SELECT runs_per_day::bigint, tokens_per_day, repo_runs_per_day::bigint, repo_tokens_per_day
		FROM budgets WHERE installation_id = $1`, installation).Scan(&runs, &tokens, &repoRuns, &repoTokens)
	if errors.Is(err, pgx.ErrNoRows) {
		return def, overridden{}, nil
	}
	if err != nil {
		return Budgets{}, overridden{}, fmt.Errorf("reading the budgets of installation %d: %w", installation, err)
	}
	b, o := def, overridden{}
	set := func(dst *int64, v *int64, flag *bool) {
		if v != nil {
			*dst, *flag = *v, true
		}
	}
	set(&b.InstallationRuns, runs, &o.InstallationRuns)
	set(&b.InstallationTokens, tokens, &o.InstallationTokens)
	set(&b.RepoRuns, repoRuns, &o.RepoRuns)
	set(&b.RepoTokens, repoTokens, &o.RepoTokens)
	return b, o, nil
}

// overBudgetEnd ends run a.run, which found budget e spent at its check: skipped, with one
// comment saying which budget and when it resets, written through the outbox (posted once,
// even across a crash: the outbox's Post), and an issue's label removed.
func (a *attempt) overBudgetEnd(ctx context.Context, e *BudgetExceeded) error {
	a.log.InfoContext(ctx, "run not started: a budget is spent", "budget", e.Scope+" "+e.What, "limit", e.Limit, "used", e.Used)
	v := a.view(StateSkipped, budgetNote(e, time.Now(), a.run.Kind))
	ok, err := a.record(ctx, StateSkipped, ExitBudget, e.Error(), "", 0, &v, true, true)
	if err != nil {
		return err
	}
	if !ok {
		return errRunCancelled
	}
	return nil
}
