package metrics

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/frognano/frognano/internal/logging"
)

// MaxUsageSeries bounds the series of each usage metric: the installations and the
// repositories with the most tokens keep labels of their own, the rest are summed under
// "other". An installation is named by its id (a number GitHub gives; never the account's
// name, which is free text), a repository by its id too (a name can be taken by another
// repository after a rename; `frognano usage --by repository` names them). So the labels come
// from a bounded set whatever GitHub sends: at most MaxUsageSeries+1 values each.
const MaxUsageSeries = 50

// Usage collects, at scrape time, what the runs kept in PostgreSQL used, per installation and
// per repository (issue 22): runs that started (passed their check), tokens by kind, model,
// tool and test seconds, and sandbox CPU seconds. They are counters for as long as runs are
// kept, like frognano_runs_finished_total; every process reports the same values (use max()).
type Usage struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	runs, tokens, seconds *prometheus.Desc // by scope (installation or repository) and its id
}

// NewUsage returns the usage collector; register it with Metrics.Registry().MustRegister.
func NewUsage(pool *pgxpool.Pool, log *slog.Logger) *Usage {
	if log == nil {
		log = slog.Default()
	}
	labels := []string{"installation", "repository"}
	return &Usage{pool: pool, log: log,
		runs: prometheus.NewDesc(namespace+"_usage_runs_total",
			"Runs that started (passed their check), by installation id and repository id (the top 50 by tokens each; the rest: other).", labels, nil),
		tokens: prometheus.NewDesc(namespace+"_usage_tokens_total",
			"Tokens the model server counted, by installation, repository and kind (prompt, completion, cached: the part of prompt served from the cache).",
			append(labels, "kind"), nil),
		seconds: prometheus.NewDesc(namespace+"_usage_seconds_total",
			"Time the runs used, by installation, repository and kind (model, tools, tests, sandbox_cpu).", append(labels, "kind"), nil),
	}
}

// Describe implements prometheus.Collector.
func (u *Usage) Describe(ch chan<- *prometheus.Desc) {
	ch <- u.runs
	ch <- u.tokens
	ch <- u.seconds
}

// Collect implements prometheus.Collector. A failed read is logged and reports nothing (the
// database collector's frognano_database_up says whether PostgreSQL answers).
func (u *Usage) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	if err := u.collect(ctx, ch); err != nil {
		u.log.Warn("metrics: reading the runs' usage from PostgreSQL", logging.Err(err))
	}
}

func (u *Usage) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	// The top installations and repositories by tokens keep their ids; the others are folded
	// into "other" in SQL, so the answer is bounded too.
	rows, err := u.pool.Query(ctx, `WITH r AS (
			SELECT installation_id, repo_id, checked_at IS NOT NULL AS started,
				coalesce(prompt_tokens, 0) AS p, coalesce(completion_tokens, 0) AS c, coalesce(cached_tokens, 0) AS k,
				coalesce(model_ms, 0) AS m, coalesce(tool_ms, 0) AS t, coalesce(test_ms, 0) AS s, coalesce(sandbox_cpu_ms, 0) AS cpu
			FROM runs),
		ti AS (SELECT installation_id FROM r GROUP BY 1 ORDER BY sum(p + c) DESC, 1 LIMIT $1),
		tr AS (SELECT repo_id FROM r GROUP BY 1 ORDER BY sum(p + c) DESC, 1 LIMIT $1)
		SELECT CASE WHEN installation_id IN (SELECT * FROM ti) THEN installation_id::text ELSE 'other' END,
			CASE WHEN repo_id IN (SELECT * FROM tr) THEN repo_id::text ELSE 'other' END,
			count(*) FILTER (WHERE started), sum(p), sum(c), sum(k), sum(m), sum(t), sum(s), sum(cpu)
		FROM r GROUP BY 1, 2`, MaxUsageSeries)
	if err != nil {
		return err
	}
	defer rows.Close()
	var out []prometheus.Metric
	for rows.Next() {
		var inst, repo string
		var started, p, c, k, m, t, s, cpu int64
		if err := rows.Scan(&inst, &repo, &started, &p, &c, &k, &m, &t, &s, &cpu); err != nil {
			return err
		}
		counter := func(d *prometheus.Desc, v float64, extra ...string) {
			out = append(out, prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{inst, repo}, extra...)...))
		}
		counter(u.runs, float64(started))
		counter(u.tokens, float64(p), "prompt")
		counter(u.tokens, float64(c), "completion")
		counter(u.tokens, float64(k), "cached")
		counter(u.seconds, float64(m)/1000, "model")
		counter(u.seconds, float64(t)/1000, "tools")
		counter(u.seconds, float64(s)/1000, "tests")
		counter(u.seconds, float64(cpu)/1000, "sandbox_cpu")
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range out {
		ch <- m
	}
	return nil
}
