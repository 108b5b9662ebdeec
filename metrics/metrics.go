// Package metrics owns frognano's Prometheus metrics: their names, labels and buckets, the
// registry, the instruments the service wires into its HTTP clients and webhook handler, and
// the collector that reads runs and River's queue from PostgreSQL at scrape time. It also
// serves the separate listener (FROGNANO_METRICS_ADDR) with /metrics and River's UI under
// /riverui behind the access token.
//
// metrics never puts a secret, a payload, an issue's text or a URL's query in a label; label
// values come from fixed sets (outcomes, states, exit reasons, phases) or from GitHub's event
// names.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every metric name.
const namespace = "frognano"

// Metrics holds the in-process instruments and their registry. Its methods are safe for
// concurrent use. The zero value is not usable; call New.
type Metrics struct {
	reg *prometheus.Registry

	deliveries     *prometheus.CounterVec   // event, outcome
	githubRequests *prometheus.CounterVec   // outcome
	githubWait     prometheus.Counter       // seconds
	modelRequests  *prometheus.CounterVec   // outcome
	modelLatency   *prometheus.HistogramVec // outcome
	sandboxReady   prometheus.Histogram
	envCache       *prometheus.CounterVec // result
	pullsEnded     *prometheus.CounterVec // outcome
}

// New registers every instrument, Go's and the process's collectors on a fresh registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "webhook_deliveries_total",
		Help: "Webhook deliveries answered by this process, by X-GitHub-Event and outcome (the handler's status: queued, duplicate, ignored, …, or refused_<HTTP status>).",
	}, []string{"event", "outcome"})
	m.githubRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "github_requests_total",
		Help: "HTTP requests to GitHub's API (each attempt, token requests included), by outcome: ok, client_error, unauthorized, rate_limited, server_error, network_error.",
	}, []string{"outcome"})
	m.githubWait = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "github_wait_seconds_total",
		Help: "Time spent waiting before GitHub requests: rate-limit waits, frognano's per-installation write pacing and retry backoff.",
	})
	m.modelRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "model_requests_total",
		Help: "Requests to the model server (chat completions), by outcome: ok, client_error, server_error, network_error.",
	}, []string{"outcome"})
	m.modelLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "model_request_seconds",
		Help:    "Latency of requests to the model server until the response headers, by outcome.",
		Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320},
	}, []string{"outcome"})
	m.sandboxReady = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "sandbox_ready_seconds",
		Help:    "Time from creating a sandbox container until it runs with its disk watcher and holds the checkout.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32},
	})
	m.envCache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "environment_cache_total",
		Help: "Per-repository environment images looked up, by result: hit (reused) or build.",
	}, []string{"result"})
	m.pullsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "pull_requests_ended_total",
		Help: "Pull requests runs published to that this process saw end (a pull_request event or a reconciliation round), by outcome: merged, closed (without merge), gone (the repository or pull request was deleted while open).",
	}, []string{"outcome"})
	m.reg.MustRegister(m.deliveries, m.githubRequests, m.githubWait, m.modelRequests, m.modelLatency, m.sandboxReady, m.envCache, m.pullsEnded,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []string{"ok", "client_error", "unauthorized", "rate_limited", "server_error", "network_error"} {
		m.githubRequests.WithLabelValues(o)
	}
	for _, o := range []string{"ok", "client_error", "server_error", "network_error"} {
		m.modelRequests.WithLabelValues(o)
	}
	for _, r := range []string{"hit", "build"} {
		m.envCache.WithLabelValues(r)
	}
	for _, o := range pullOutcomes {
		m.pullsEnded.WithLabelValues(o)
	}
	return m
}

// Registry is where further collectors (such as the database collector) are registered.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveSandboxReady records how long a sandbox took to be ready.
func (m *Metrics) ObserveSandboxReady(d time.Duration) { m.sandboxReady.Observe(d.Seconds()) }

// EnvironmentCache records one lookup of a per-repository environment: hit or build.
func (m *Metrics) EnvironmentCache(hit bool) {
	if hit {
		m.envCache.WithLabelValues("hit").Inc()
	} else {
		m.envCache.WithLabelValues("build").Inc()
	}
}

// pullOutcomes are the outcome label's values of pull_requests_ended_total (package outcome's
// states other than open).
var pullOutcomes = []string{"merged", "closed", "gone"}

// PullRequestEnded counts a pull request that ended as outcome (merged, closed, gone); any
// other value is counted as nothing.
func (m *Metrics) PullRequestEnded(outcome string) {
	for _, o := range pullOutcomes {
		if o == outcome {
			m.pullsEnded.WithLabelValues(o).Inc()
		}
	}
}

// statusOutcome maps an HTTP status to an outcome label.
func statusOutcome(code int) string {
	switch {
	case code < 400:
		return "ok"
	case code == http.StatusUnauthorized:
		return "unauthorized"
	case code >= 500:
		return "server_error"
	}
	return "client_error"
}

func refused(code int) string { return "refused_" + strconv.Itoa(code) }
