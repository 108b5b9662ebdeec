package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/frognano/frognano/migrations/dbtest"
)

func TestRequireToken(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-token"
	h := requireToken(token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "in") }))
	for _, tc := range []struct {
		name string
		set  func(r *http.Request)
		want int
	}{
		{"NoCredentials", func(r *http.Request) {}, 401},
		{"WrongBearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401},
		{"EmptyBasicPassword", func(r *http.Request) { r.SetBasicAuth("admin", "") }, 401},
		{"Bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }, 200},
		{"BasicAnyUser", func(r *http.Request) { r.SetBasicAuth("anyone", token) }, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/riverui/", nil)
			tc.set(r)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("status %d, want %d", w.Code, tc.want)
			}
			if w.Code == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("no basic-auth challenge")
			}
		})
	}
}

func TestWebhooksOutcomes(t *testing.T) {
	t.Parallel()
	m := New()
	h := m.Webhooks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Test") {
		case "401":
			http.Error(w, `{"error":"x"}`, 401)
		case "queued":
			w.WriteHeader(202)
			io.WriteString(w, `{"status":"queued","run_ids":[1]}`)
		default:
			io.WriteString(w, `{"status":"Weird Status!"}`)
		}
	}))
	send := func(event, test string) {
		r := httptest.NewRequest("POST", "/webhook", strings.NewReader("{}"))
		r.Header.Set("X-GitHub-Event", event)
		r.Header.Set("X-Test", test)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	send("issues", "queued")
	send("issues", "queued")
	send("made-up-by-a-stranger-"+strings.Repeat("x", 50), "401")
	send("ping", "other")
	for _, c := range []struct {
		event, outcome string
		want           float64
	}{{"issues", "queued", 2}, {"unverified", "refused_401", 1}, {"ping", "accepted", 1}} {
		if got := testutil.ToFloat64(m.deliveries.WithLabelValues(c.event, c.outcome)); got != c.want {
			t.Errorf("deliveries{%s,%s} = %v, want %v", c.event, c.outcome, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.deliveries); n != 3 {
		t.Errorf("%d delivery series, want 3 (no series from a stranger's event name)", n)
	}
}

func TestDatabaseCollector(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler, state,
			exit_reason, steps, prompt_tokens, completion_tokens, model_ms, tool_ms, test_ms, elapsed_ms, finished_at)
		VALUES ('h', 'd1', 1, 1, 'o', 'r', 1, 'u', 'succeeded', 'completed', 12, 40000, 3000, 100000, 20000, 30000, 200000, now()),
		       ('h', 'd2', 1, 1, 'o', 'r', 2, 'u', 'queued', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		       ('h', 'd3', 1, 1, 'o', 'r', 2, 'u', 'waiting', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	m.Registry().MustRegister(NewDatabase(pool, nil))
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`frognano_database_up 1`,
		`frognano_runs{state="queued"} 1`,
		`frognano_runs{state="waiting"} 1`,
		`frognano_runs{state="succeeded"} 1`,
		`frognano_runs_finished_total{exit_reason="completed",state="succeeded"} 1`,
		`frognano_run_duration_seconds_count 1`,
		`frognano_run_duration_seconds_sum 200`,
		`frognano_run_phase_seconds_sum{phase="setup"} 50`,
		`frognano_run_phase_seconds_bucket{phase="model",le="120"} 1`,
		`frognano_run_phase_seconds_bucket{phase="model",le="60"} 0`,
		`frognano_run_steps_sum 12`,
		`frognano_run_tokens_sum{kind="prompt"} 40000`,
		`frognano_river_jobs{state="available"} 0`,
		`frognano_github_requests_total{outcome="rate_limited"} 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, `frognano_runs_finished_total{exit_reason="other",state="waiting"}`) {
		t.Error("a waiting run is counted as finished")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
}

// TestPullRequestsEnded: frognano_pull_requests_ended_total counts each outcome, starts at 0
// for each, and takes no label value from outside its fixed set.
func TestPullRequestsEnded(t *testing.T) {
	t.Parallel()
	m := New()
	for _, o := range []string{"merged", "merged", "closed", "gone", "open", "anything else"} {
		m.PullRequestEnded(o)
	}
	for o, want := range map[string]float64{"merged": 2, "closed": 1, "gone": 1} {
		if got := testutil.ToFloat64(m.pullsEnded.WithLabelValues(o)); got != want {
			t.Errorf("%s: %v, want %v", o, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.pullsEnded); n != 3 {
		t.Errorf("%d series, want merged, closed and gone only", n)
	}
}
