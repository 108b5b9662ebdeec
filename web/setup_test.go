package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
)

// testAuth is the tests' Authenticator: GET /login?as=LOGIN&next=PATH signs LOGIN in with a
// cookie (no password: the tests are about what the pages show to whom, web/auth tests
// sign-in itself); readable says which repositories each login may read, by GitHub id, as
// web/auth decides. Each repository name the tests use stands for one id (repoID).
type testAuth struct {
	mu       sync.Mutex
	ids      map[string]int64          // lower(owner/repo) -> the repository's id
	readable map[string]map[int64]bool // login -> repository ids
	asked    int                       // CanRead and FindRepo calls
}

const sessionCookie = "test_session"

// repoID is the id of the repository named owner/repo ("owner/repo" as one string).
func (a *testAuth) repoID(name string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.idLocked(name)
}

func (a *testAuth) idLocked(name string) int64 {
	if a.ids == nil {
		a.ids = map[string]int64{}
	}
	key := strings.ToLower(name)
	if _, ok := a.ids[key]; !ok {
		a.ids[key] = int64(1000 + len(a.ids))
	}
	return a.ids[key]
}

func (a *testAuth) allow(login string, repos ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.readable == nil {
		a.readable = map[string]map[int64]bool{}
	}
	if a.readable[login] == nil {
		a.readable[login] = map[int64]bool{}
	}
	for _, r := range repos {
		a.readable[login][a.idLocked(r)] = true
	}
}

func (a *testAuth) revoke(login, repo string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.readable[login], a.idLocked(repo))
}

func (a *testAuth) Viewer(r *http.Request) (auth.Viewer, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return auth.Viewer{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.readable[c.Value]; !ok {
		return auth.Viewer{}, false
	}
	return auth.Viewer{Login: c.Value, Token: "user-token-of-" + c.Value}, true
}

func (a *testAuth) CanRead(_ context.Context, v auth.Viewer, repoID int64) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	return a.readable[v.Login][repoID], nil
}

func (a *testAuth) FindRepo(_ context.Context, v auth.Viewer, owner, repo string) (int64, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	id, ok := a.ids[strings.ToLower(owner+"/"+repo)]
	if !ok || !a.readable[v.Login][id] {
		return 0, false, nil
	}
	return id, true, nil
}

func (a *testAuth) Routes(r chi.Router) {
	r.Get("/login", func(w http.ResponseWriter, r *http.Request) {
		if as := r.URL.Query().Get("as"); as != "" {
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: as, Path: "/", HttpOnly: true})
			next := r.URL.Query().Get("next")
			if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
				next = "/runs"
			}
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Sign in</title><h1 id="login">Sign in</h1>`))
	})
}

// bundle is a migrated schema, the pages on a test server and the test Authenticator.
type bundle struct {
	pool  *pgxpool.Pool
	auth  *testAuth
	pages *Pages
	srv   *httptest.Server
	seq   int
}

func setup(t testing.TB) *bundle {
	t.Helper()
	return setupWith(t, nil)
}

// setupWith is setup with the pages' Config changed by edit first.
func setupWith(t testing.TB, edit func(*Config)) *bundle {
	t.Helper()
	pool := dbtest.New(t)
	a := &testAuth{}
	a.allow("alice", "octo/pager", "octo/other")
	a.allow("bob", "bob/own")
	cfg := Config{Runs: run.NewStore(pool, nil), Stats: stats.NewStore(pool), Auth: a, PollInterval: 50 * time.Millisecond, RecheckInterval: 100 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.handler())
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, auth: a, pages: p, srv: srv}
}

// seedRun is a runs row; zero fields keep the column's default.
type seedRun struct {
	RepoID      int64 // GitHub's id of the repository; 0: one of the bundle's own
	Owner, Repo string
	Issue       int
	State       string
	Patch       string
	PRURL       string
	ExitReason  string
	Steps       int
	Trajectory  string
}

func (b *bundle) run(t testing.TB, s seedRun) int64 {
	t.Helper()
	b.seq++
	if s.Issue == 0 {
		s.Issue = 7
	}
	if s.State == "" {
		s.State = run.StateQueued
	}
	if s.RepoID == 0 {
		if b.auth == nil {
			t.Fatal("seeding a run: give the repository's GitHub id (seedRun.RepoID)")
		}
		s.RepoID = b.auth.repoID(s.Owner + "/" + s.Repo)
	}
	var id int64
	err := b.pool.QueryRow(context.Background(), `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id,
			owner, repo, issue, labeler, state, patch, pr_url, exit_reason, steps, prompt_tokens, completion_tokens,
			model_ms, tool_ms, test_ms, elapsed_ms, started_at, finished_at, trajectory, attempts)
		VALUES ('integration:1', $1, 5, $2, $3, $4, $5, 'maintainer', $6, nullif($7, '')::bytea, nullif($8, ''),
			nullif($9, ''), $10, 3000, 400, 40000, 5000, 3000, 50000, now(),
			CASE WHEN $6 IN ('waiting', 'queued', 'running') THEN NULL ELSE now() END, nullif($11, '')::jsonb, 1)
		RETURNING id`,
		"guid-"+strings.Repeat("x", b.seq), s.RepoID, s.Owner, s.Repo, s.Issue, s.State, s.Patch, s.PRURL,
		s.ExitReason, s.Steps, s.Trajectory).Scan(&id)
	if err != nil {
		t.Fatalf("seeding a run: %v", err)
	}
	return id
}

func (b *bundle) event(t testing.TB, runID int64, kind string, data any) {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(context.Background(), `INSERT INTO run_events (run_id, kind, data) VALUES ($1, $2, $3)`,
		runID, kind, raw); err != nil {
		t.Fatalf("seeding an event: %v", err)
	}
}

func (b *bundle) finish(t *testing.T, runID int64, state, patch, prURL string) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = $2, patch = nullif($3, '')::bytea,
			pr_url = nullif($4, ''), finished_at = now() WHERE id = $1`, runID, state, patch, prURL); err != nil {
		t.Fatalf("finishing a run: %v", err)
	}
}

// get requests path as login ("" : no session) without following redirects.
func (b *bundle) get(t *testing.T, path, login string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if login != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: login})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// stream opens run id's event stream as login. A generous bound makes a broken stream fail the
// test instead of hanging it; no timing is asserted. The body is closed when the test ends.
func (b *bundle) stream(t *testing.T, id int64, login string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/runs/"+itoa(id)+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: login})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// untilStep reads a stream up to its first step event.
func untilStep(t *testing.T, body io.Reader) *bufio.Reader {
	t.Helper()
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream before the first step: %v", err)
		}
		if line == "event: step\n" {
			return r
		}
	}
}

const samplePatch = "diff --git a/pager.go b/pager.go\n--- a/pager.go\n+++ b/pager.go\n@@ -1,3 +1,3 @@\n package pager\n-func Pages(n int) int { return n / 10 }\n+func Pages(n int) int { return (n + 9) / 10 }\n"

// step is a step event with one Bash call.
func step(index int, command, observation string) run.StepEvent {
	return run.StepEvent{Attempt: 1, Index: index, ModelMS: 1200, ToolMS: 300,
		Calls:        []run.CallEvent{{Tool: "Bash", Arguments: `{"command":` + mustJSON(command) + `}`}},
		Observations: []run.ObservedText{{Tool: "Bash", Text: observation}}}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
