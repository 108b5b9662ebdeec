package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/migrations/dbtest"
)

// usageDB is a migrated schema holding four runs of two installations, three repositories,
// two people and two models, with known usage, and the environment that points the commands at it.
func usageDB(t *testing.T) func(string) string {
	t.Helper()
	pool := dbtest.New(t)
	ctx := context.Background()
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	_, err := pool.Exec(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
			state, created_at, checked_at, prompt_tokens, completion_tokens, cached_tokens, model_ms, tool_ms, test_ms,
			sandbox_cpu_ms, sandbox_peak_bytes, agent_attempts, model)
		VALUES
		('h', 'd1', 5, 42, 'octo', 'pager', 1, 'Alice', 'succeeded', '2026-03-02T10:00:00Z', '2026-03-02T10:00:01Z', 3000, 400, 1000, 40000, 5000, 3000, 12500, 300000000, 1, 'default'),
		('h', 'd2', 5, 42, 'octo', 'pager', 2, 'alice', 'failed',    '2026-03-03T10:00:00Z', '2026-03-03T10:00:01Z', 5000, 600, 0,    60000, 7000, 4000, 20000, 500000000, 2, 'large'),
		('h', 'd3', 5, 43, 'octo', 'ledger', 3, 'bob',  'skipped',   '2026-03-03T11:00:00Z', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		('h', 'd4', 9, 77, 'acme', 'tool', 4, 'bob',    'succeeded', '2026-03-04T10:00:00Z', '2026-03-04T10:00:01Z', 1000, 100, 500, 10000, 1000, 1000, 2500, 100000000, 1, 'default'),
		('h', 'd5', 9, 77, 'acme', 'tool', 5, 'bob',    'succeeded', '2026-01-04T10:00:00Z', '2026-01-04T10:00:01Z', 9999, 999, 0, 1, 1, 1, 1, 1, 1, 'large')`)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": svcDatabaseURL(t, schema)}
	return func(k string) string { return env[k] }
}

// TestUsageCommand pins `frognano usage` in each format and grouping (goldens), counting only
// the runs created since --since; a person's runs are counted whatever the case of their login.
func TestUsageCommand(t *testing.T) {
	t.Parallel()
	getenv := usageDB(t)
	for _, tt := range []struct{ by, format, file string }{
		{"repository", "table", "usage-by-repository.txt"},
		{"installation", "csv", "usage-by-installation.csv"},
		{"person", "json", "usage-by-person.json"},
		{"person", "table", "usage-by-person.txt"},
		{"model", "table", "usage-by-model.txt"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"usage", "--since", "2026-03-01", "--by", tt.by, "--format", tt.format}, getenv, &stdout, &stderr); err != nil {
			t.Fatalf("frognano usage --by %s --format %s: %v\n%s", tt.by, tt.format, err, stderr.String())
		}
		golden.Check(t, tt.file, stdout.String())
	}
}

// TestUsageCommandBadFlags: each mistake is a usage error (exit 2) that says what to give.
func TestUsageCommandBadFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "March"}, `--since "March" is not a date (YYYY-MM-DD)`},
		{[]string{"--by", "team"}, `--by "team": use installation, repository, person or model`},
		{[]string{"--format", "xml"}, `--format "xml": use table, csv or json`},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{nil, "DATABASE_URL is not set"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"usage"}, tt.args...), func(string) string { return "" }, &stdout, &stderr)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("frognano usage %v: %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
}

// TestBudgetCommand: `frognano budget set` keeps an installation's override (the worker reads
// it at the next check: queue's TestBudgetOverrideWithoutRestart), `show` prints what a check
// applies and where each value comes from, `clear` goes back to the settings.
func TestBudgetCommand(t *testing.T) {
	t.Parallel()
	db := usageDB(t)
	getenv := func(k string) string {
		if k == "FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY" {
			return "10"
		}
		return db(k)
	}
	cli := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"budget"}, args...), getenv, &stdout, &stderr)
		return stdout.String(), err
	}
	out, err := cli("set", "--installation", "5", "--runs", "2", "--tokens", "0")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "budget-show.txt", out)
	out, err = cli("clear", "--installation", "5")
	flat := strings.Join(strings.Fields(out), " ")
	if err != nil || !strings.Contains(flat, "runs per repository 10 (FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY)") ||
		!strings.Contains(flat, "runs no limit (FROGNANO_BUDGET_INSTALLATION_RUNS_PER_DAY)") {
		t.Errorf("after clear: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"set", "--installation", "5"}, {"set", "--runs", "2"}, {"set", "--installation", "5", "--runs", "-1"}, {"raise"}} {
		if _, err := cli(args...); err == nil || exitCode(err) != 2 {
			t.Errorf("frognano budget %v: %v, want a usage error", args, err)
		}
	}
}
