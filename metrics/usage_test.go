package metrics

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frognano/frognano/migrations/dbtest"
)

// TestUsageCollector: the usage counters per installation and repository sum the runs kept in
// PostgreSQL; past MaxUsageSeries repositories, the ones with the fewest tokens are summed
// under "other", so a flood of repositories cannot grow the series without bound.
func TestUsageCollector(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	// Repository 1000 of installation 5: two runs that started; repositories 1..60 of
	// installation 9: one run each, the fewer tokens the higher the id.
	if _, err := pool.Exec(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
			state, checked_at, prompt_tokens, completion_tokens, cached_tokens, model_ms, tool_ms, test_ms, sandbox_cpu_ms)
		SELECT 'h', 'a' || i, 5, 1000, 'octo', 'pager', i, 'alice', 'succeeded', now(), 100000, 1000, 50000, 30000, 2000, 1000, 4500
		FROM generate_series(1, 2) i
		UNION ALL
		SELECT 'h', 'b' || i, 9, i, 'acme', 'r' || i, 1, 'bob', 'succeeded', now(), 1000 - i, 10, 0, 1000, 0, 0, 100
		FROM generate_series(1, 60) i`); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewUsage(pool, nil))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]bool{}
	values := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
				if l.GetName() == "repository" {
					repos[l.GetValue()] = true
				}
			}
			values[key] = m.GetCounter().GetValue()
		}
	}
	if len(repos) != MaxUsageSeries+1 || !repos["other"] || !repos["1000"] || repos["60"] {
		t.Errorf("%d repository labels (other: %v, 1000: %v, 60: %v); want the top %d and other", len(repos), repos["other"], repos["1000"], repos["60"], MaxUsageSeries)
	}
	for key, want := range map[string]float64{
		"frognano_usage_runs_total,installation=5,repository=1000":                     2,
		"frognano_usage_tokens_total,installation=5,kind=prompt,repository=1000":       200000,
		"frognano_usage_tokens_total,installation=5,kind=cached,repository=1000":       100000,
		"frognano_usage_seconds_total,installation=5,kind=sandbox_cpu,repository=1000": 9,
		"frognano_usage_runs_total,installation=9,repository=other":                    11, // repositories 50..60
	} {
		if values[key] != want {
			t.Errorf("%s = %v, want %v", key, values[key], want)
		}
	}
}
