package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

// GitHubTransport counts every attempt that reaches GitHub through next (default
// http.DefaultTransport) by outcome. Put it under githubapp's retry machinery
// (githubapp.Config.Transport) so that each retry and token request counts.
func (m *Metrics) GitHubTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		switch {
		case err != nil:
			m.githubRequests.WithLabelValues("network_error").Inc()
		case resp.StatusCode == http.StatusTooManyRequests,
			resp.StatusCode == http.StatusForbidden && (resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0"):
			m.githubRequests.WithLabelValues("rate_limited").Inc()
		default:
			m.githubRequests.WithLabelValues(statusOutcome(resp.StatusCode)).Inc()
		}
		return resp, err
	})
}

// GitHubSleep wraps githubapp.Config.Sleep (nil: a timer) so that the time waited before
// GitHub requests is counted.
func (m *Metrics) GitHubSleep(next func(context.Context, time.Duration) error) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		if d > 0 {
			m.githubWait.Add(d.Seconds())
		}
		if next != nil {
			return next(ctx, d)
		}
		return fault.Wait(ctx, d)
	}
}

// ModelTransport times and counts the requests to the model server through next (default
// http.DefaultTransport), for leaf.Config.HTTPClient.
func (m *Metrics) ModelTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		outcome := "network_error"
		if err == nil {
			outcome = statusOutcome(resp.StatusCode)
			if outcome == "unauthorized" {
				outcome = "client_error"
			}
		}
		m.modelRequests.WithLabelValues(outcome).Inc()
		m.modelLatency.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Webhooks wraps the service's HTTP handler and counts each answered POST /webhook by event
// and outcome. The outcome is the "status" of the handler's JSON answer (queued, duplicate,
// ignored, …) or refused_<status>. The event name, which a sender chooses, is kept only for
// deliveries whose signature verified (any answer but 401 and 413), and only when it looks
// like one of GitHub's event names, so that strangers cannot mint series.
func (m *Metrics) Webhooks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/webhook" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		event := "unverified"
		if status != http.StatusUnauthorized && status != http.StatusRequestEntityTooLarge {
			event = labelWord(r.Header.Get("X-GitHub-Event"), "other")
		}
		outcome := refused(status)
		if status < 300 {
			var body struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(rec.body.Bytes(), &body)
			outcome = labelWord(body.Status, "accepted")
		}
		m.deliveries.WithLabelValues(event, outcome).Inc()
	})
}

// labelWord returns s when it is a short lower-case word (letters, digits, underscores), else def.
func labelWord(s, def string) string {
	if s == "" || len(s) > 40 {
		return def
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return def
		}
	}
	return s
}

// recorder keeps the status and the first KiB of an answer.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if room := 1024 - r.body.Len(); room > 0 {
		r.body.Write(b[:min(room, len(b))])
	}
	return r.ResponseWriter.Write(b)
}
