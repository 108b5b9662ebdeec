package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/frognano/frognano/internal/logging"
)

// dbTimeout bounds the queries of one scrape.
const dbTimeout = 5 * time.Second

// Database collects, at scrape time, what PostgreSQL knows for every process sharing it: runs
// by state and exit reason, the duration of finished runs split into phases, their steps and
// tokens, and River's jobs by state. Every process reports the same values, so query them
// with max() (or scrape one process), not sum(). It only reads.
type Database struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	up, runs, jobs, finished *prometheus.Desc
	hists                    []dbHistogram
}

type dbHistogram struct {
	desc    *prometheus.Desc
	labels  []string
	expr    string // a float8 SQL expression over one runs row; NULL rows are left out
	buckets []float64
}

var secondBuckets = []float64{30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400}

// NewDatabase returns the collector; register it with Metrics.Registry().MustRegister.
func NewDatabase(pool *pgxpool.Pool, log *slog.Logger) *Database {
	if log == nil {
		log = slog.Default()
	}
	d := &Database{pool: pool, log: log}
	d.up = prometheus.NewDesc(namespace+"_database_up", "1 when the last scrape could read runs and River's jobs from PostgreSQL.", nil, nil)
	d.runs = prometheus.NewDesc(namespace+"_runs", "Runs in the database by state (waiting, queued, running, succeeded, failed, cancelled, skipped).", []string{"state"}, nil)
	d.finished = prometheus.NewDesc(namespace+"_runs_finished_total", "Finished runs by final state and exit reason (as long as runs are kept).", []string{"state", "exit_reason"}, nil)
	d.jobs = prometheus.NewDesc(namespace+"_river_jobs", "River jobs by state (available, running, retryable, scheduled, …): the queue's depth.", []string{"state"}, nil)
	phase := prometheus.NewDesc(namespace+"_run_phase_seconds",
		"Time of finished runs by phase: model (waiting for the model), tools (tool calls), tests (both test runs), "+
			"setup (the rest of the run's wall time, floored at 0: sandboxes, copying, the diff; tests before run alongside the agent).",
		[]string{"phase"}, nil)
	d.hists = []dbHistogram{
		{desc: prometheus.NewDesc(namespace+"_run_duration_seconds", "Wall time of finished runs (the runner's elapsed time).", nil, nil),
			expr: "elapsed_ms / 1000.0", buckets: secondBuckets},
		{desc: phase, labels: []string{"model"}, expr: "model_ms / 1000.0", buckets: secondBuckets},
		{desc: phase, labels: []string{"tools"}, expr: "tool_ms / 1000.0", buckets: secondBuckets},
		{desc: phase, labels: []string{"tests"}, expr: "test_ms / 1000.0", buckets: secondBuckets},
		{desc: phase, labels: []string{"setup"}, expr: "greatest(0, elapsed_ms - coalesce(model_ms, 0) - coalesce(tool_ms, 0) - coalesce(test_ms, 0)) / 1000.0", buckets: secondBuckets},
		{desc: prometheus.NewDesc(namespace+"_run_steps", "Model turns of finished runs.", nil, nil),
			expr: "steps", buckets: []float64{1, 5, 10, 20, 30, 50, 75, 100, 150}},
		{desc: prometheus.NewDesc(namespace+"_run_tokens", "Tokens of finished runs, by kind (prompt, completion).", []string{"kind"}, nil),
			labels: []string{"prompt"}, expr: "prompt_tokens", buckets: prometheus.ExponentialBuckets(10000, 2, 10)},
	}
	d.hists = append(d.hists, dbHistogram{desc: d.hists[len(d.hists)-1].desc, labels: []string{"completion"}, expr: "completion_tokens",
		buckets: prometheus.ExponentialBuckets(1000, 2, 10)})
	return d
}

// Describe implements prometheus.Collector.
func (d *Database) Describe(ch chan<- *prometheus.Desc) {
	ch <- d.up
	ch <- d.runs
	ch <- d.finished
	ch <- d.jobs
	seen := map[*prometheus.Desc]bool{}
	for _, h := range d.hists {
		if !seen[h.desc] {
			seen[h.desc] = true
			ch <- h.desc
		}
	}
}

// Collect implements prometheus.Collector.
func (d *Database) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	if err := d.collect(ctx, ch); err != nil {
		d.log.Warn("metrics: reading runs and jobs from PostgreSQL", logging.Err(err))
		ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, 1)
}

func (d *Database) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	var out []prometheus.Metric
	rows, err := d.pool.Query(ctx, `SELECT state, coalesce(exit_reason, ''), count(*) FROM runs GROUP BY 1, 2`)
	if err != nil {
		return err
	}
	byState := map[string]float64{"waiting": 0, "queued": 0, "running": 0, "succeeded": 0, "failed": 0, "cancelled": 0, "skipped": 0}
	for rows.Next() {
		var state, reason string
		var n int64
		if err := rows.Scan(&state, &reason, &n); err != nil {
			rows.Close()
			return err
		}
		byState[state] += float64(n)
		if state != "waiting" && state != "queued" && state != "running" {
			out = append(out, prometheus.MustNewConstMetric(d.finished, prometheus.CounterValue, float64(n), state, labelWord(reason, "other")))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for s, n := range byState {
		out = append(out, prometheus.MustNewConstMetric(d.runs, prometheus.GaugeValue, n, s))
	}

	rows, err = d.pool.Query(ctx, `SELECT state::text, count(*) FROM river_job GROUP BY 1`)
	if err != nil {
		return err
	}
	jobs := map[string]float64{"available": 0, "running": 0, "retryable": 0, "scheduled": 0, "pending": 0}
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			rows.Close()
			return err
		}
		jobs[state] = float64(n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for s, n := range jobs {
		out = append(out, prometheus.MustNewConstMetric(d.jobs, prometheus.GaugeValue, n, s))
	}

	for _, h := range d.hists {
		m, err := d.histogram(ctx, h)
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	for _, m := range out {
		ch <- m
	}
	return nil
}

// histogram computes one histogram over the finished runs in one query.
func (d *Database) histogram(ctx context.Context, h dbHistogram) (prometheus.Metric, error) {
	var count int64
	var sum float64
	var cum []int64
	err := d.pool.QueryRow(ctx, `WITH v AS (SELECT (`+h.expr+`)::float8 AS x FROM runs WHERE elapsed_ms IS NOT NULL AND finished_at IS NOT NULL)
		SELECT count(x), coalesce(sum(x), 0), array(SELECT (SELECT count(*) FROM v WHERE x <= b) FROM unnest($1::float8[]) AS b)
		FROM v`, h.buckets).Scan(&count, &sum, &cum)
	if err != nil {
		return nil, err
	}
	buckets := make(map[float64]uint64, len(h.buckets))
	for i, b := range h.buckets {
		buckets[b] = uint64(cum[i])
	}
	return prometheus.NewConstHistogram(h.desc, uint64(count), sum, buckets, h.labels...)
}
