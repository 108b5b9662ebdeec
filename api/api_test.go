package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/run"
)

const publicURL = "https://frognano.example.com"

// fixture is the API on a migrated schema of its own, an insert-only queue (as a web-only
// process has), the real GitHub App client against the fake GitHub, and run's Store.
type fixture struct {
	pool   *pgxpool.Pool
	gh     *githubtest.Server
	tokens *Tokens
	srv    *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool := dbtest.New(t)
	gh := githubtest.New(t)
	// installation 7 has acme/widgets and acme/gadgets; installation 9 has other/thing.
	gh.AddInstallation(7, gh.AddRepo("acme", "widgets", map[string]string{"README": "x\n"}), gh.AddRepo("acme", "gadgets", map[string]string{"README": "x\n"}))
	gh.AddInstallation(9, gh.AddRepo("other", "thing", map[string]string{"README": "x\n"}))
	app, err := githubapp.New(githubapp.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL})
	if err != nil {
		t.Fatal(err)
	}
	qc, err := queue.NewClient(pool, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := NewTokens(pool)
	a, err := New(Config{Tokens: tokens, Intake: qc, Repos: app, Runs: run.NewStore(pool, nil), PublicURL: publicURL,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	a.Routes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return &fixture{pool: pool, gh: gh, tokens: tokens, srv: srv}
}

func (f *fixture) token(t *testing.T, name string, scope Scope) (Token, string) {
	t.Helper()
	tok, secret, err := f.tokens.Create(context.Background(), name, scope)
	if err != nil {
		t.Fatal(err)
	}
	return tok, secret
}

// do sends method path with body and the bearer secret ("": no Authorization header) and
// returns the status and the decoded answer.
func (f *fixture) do(t *testing.T, method, path, secret string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %d, the answer is not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

func (f *fixture) start(t *testing.T, secret string, body string) (int, map[string]any) {
	t.Helper()
	return f.do(t, http.MethodPost, "/api/v1/runs", secret, strings.NewReader(body))
}

// runRow is what the runs table holds of run id.
type runRow struct {
	installation, repoID, tokenID int64
	owner, repo, labeler, trigger string
	issue                         int
	state, request, base, model   string
	attempts                      int
}

func (f *fixture) row(t *testing.T, id int64) runRow {
	t.Helper()
	var r runRow
	err := f.pool.QueryRow(context.Background(), `SELECT installation_id, repo_id, coalesce(token_id, 0), owner, repo, labeler,
			coalesce(trigger, ''), issue, state, coalesce(request, ''), coalesce(asked_base, ''), coalesce(asked_model, ''),
			coalesce(asked_attempts, 0) FROM runs WHERE id = $1`, id).
		Scan(&r.installation, &r.repoID, &r.tokenID, &r.owner, &r.repo, &r.labeler, &r.trigger, &r.issue, &r.state, &r.request,
			&r.base, &r.model, &r.attempts)
	if err != nil {
		t.Fatalf("reading run %d: %v", id, err)
	}
	return r
}

func (f *fixture) countRuns(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A token scoped to a repository starts a run there: 201 with the run's id, page and state,
// and the run records the token, the API trigger, the options and the instructions. A second
// request on the same issue is 409 naming the active run, and starts nothing.
func TestStartRecordsTheTokensRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, secret := f.token(t, "tracker", Scope{Repos: []string{"ACME/widgets"}})
	status, ans := f.start(t, secret, `{"repository": "acme/widgets", "issue": 12, "base": "release-1", "attempts": 2,
		"model": "big", "instructions": "  keep the public API as it is  "}`)
	if status != http.StatusCreated {
		t.Fatalf("status %d, %v", status, ans)
	}
	id := int64(ans["id"].(float64))
	if ans["state"] != run.StateQueued || ans["url"] != publicURL+"/runs/"+strconv.FormatInt(id, 10) {
		t.Errorf("answer %v", ans)
	}
	got := f.row(t, id)
	repo := f.gh.Repo("acme", "widgets")
	want := runRow{installation: 7, repoID: repo.ID, tokenID: tok.ID, owner: "acme", repo: "widgets", labeler: "token:tracker",
		trigger: run.TriggerAPI, issue: 12, state: run.StateQueued, request: "keep the public API as it is", base: "release-1",
		model: "big", attempts: 2}
	if got != want {
		t.Errorf("run row\n got %+v\nwant %+v", got, want)
	}

	status, ans = f.start(t, secret, `{"repository": "acme/widgets", "issue": 12}`)
	if status != http.StatusConflict || int64(ans["run_id"].(float64)) != id || !strings.Contains(ans["error"].(string), strconv.FormatInt(id, 10)) {
		t.Errorf("second request: %d %v, want 409 naming run %d", status, ans, id)
	}
	if n := f.countRuns(t); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if list, err := f.tokens.List(context.Background()); err != nil || len(list) != 1 || list[0].ID != tok.ID || list[0].LastUsedAt == nil {
		t.Errorf("tokens after use: %+v, %v; want its last use recorded", list, err)
	}
}

// Every refusal: the token (none, another scheme, malformed, unknown, revoked: the same 401),
// the scope (403), the repository (404), the body (400 naming what is wrong, 413 when too
// large). None starts a run.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, widgets := f.token(t, "widgets-only", Scope{Repos: []string{"acme/widgets"}})
	_, inst9 := f.token(t, "installation-9", Scope{Installations: []int64{9}})
	_, inst7 := f.token(t, "installation-7", Scope{Installations: []int64{7}})
	_, nothing := f.token(t, "nothing", Scope{Repos: []string{"acme/nothing"}})
	revoked, revokedSecret := f.token(t, "old", Scope{Repos: []string{"acme/widgets"}})
	if _, err := f.tokens.Revoke(context.Background(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	ok := `{"repository": "acme/widgets", "issue": 1}`
	big := `{"repository": "acme/widgets", "issue": 1, "instructions": "` + strings.Repeat("a", MaxBodyBytes) + `"}`
	for _, c := range []struct {
		name, auth, body string
		status           int
		says             string
	}{
		{"NoToken", "", ok, http.StatusUnauthorized, unauthorized},
		{"BasicAuth", "Basic " + widgets, ok, http.StatusUnauthorized, unauthorized},
		{"Malformed", "Bearer fna_nothex", ok, http.StatusUnauthorized, unauthorized},
		{"Unknown", "Bearer " + TokenPrefix + strings.Repeat("0", 64), ok, http.StatusUnauthorized, unauthorized},
		{"Revoked", "Bearer " + revokedSecret, ok, http.StatusUnauthorized, unauthorized},
		{"AnotherRepository", "Bearer " + widgets, `{"repository": "acme/gadgets", "issue": 1}`, http.StatusForbidden, "scope does not include acme/gadgets"},
		{"AnotherInstallation", "Bearer " + inst9, ok, http.StatusForbidden, "scope does not include acme/widgets"},
		{"UnknownRepository", "Bearer " + nothing, `{"repository": "acme/nothing", "issue": 1}`, http.StatusNotFound, "no installation of the App has the repository acme/nothing"},
		// An installation's token learns nothing of the repositories outside it: one that no
		// installation has is refused as one of another installation is.
		{"UnknownRepositoryOfNoInstallation", "Bearer " + inst7, `{"repository": "acme/nothing", "issue": 1}`, http.StatusForbidden, "scope does not include acme/nothing"},
		{"AnotherInstallationUnknownRepository", "Bearer " + inst9, `{"repository": "acme/nothing", "issue": 1}`, http.StatusForbidden, "scope does not include acme/nothing"},
		{"UnknownRepositoryOutOfScope", "Bearer " + widgets, `{"repository": "acme/nothing", "issue": 1}`, http.StatusForbidden, "scope does not include acme/nothing"},
		{"BadOption", "Bearer " + widgets, `{"repository": "acme/widgets", "issue": 1, "attempts": 99}`, http.StatusBadRequest, `option "attempts": must be a whole number from 1 to 20`},
		{"BadBase", "Bearer " + widgets, `{"repository": "acme/widgets", "issue": 1, "base": "-x"}`, http.StatusBadRequest, `option "base"`},
		{"UnknownField", "Bearer " + widgets, `{"repository": "acme/widgets", "issue": 1, "atempts": 2}`, http.StatusBadRequest, `unknown field "atempts"`},
		{"WrongType", "Bearer " + widgets, `{"repository": "acme/widgets", "issue": "1"}`, http.StatusBadRequest, `"issue" has the wrong type`},
		{"NotJSON", "Bearer " + widgets, `repository=acme/widgets`, http.StatusBadRequest, "not a run request"},
		{"NoIssue", "Bearer " + widgets, `{"repository": "acme/widgets"}`, http.StatusBadRequest, `"issue" must be an issue number`},
		{"BadRepository", "Bearer " + widgets, `{"repository": "acme/../x", "issue": 1}`, http.StatusBadRequest, `"repository" must be OWNER/REPO`},
		{"TwoValues", "Bearer " + widgets, ok + ok, http.StatusBadRequest, "more than one JSON value"},
		{"TooLarge", "Bearer " + widgets, big, http.StatusRequestEntityTooLarge, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/api/v1/runs", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var ans ErrorAnswer
			if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.status || !strings.Contains(ans.Error, c.says) {
				t.Errorf("%d %q, want %d saying %q", resp.StatusCode, ans.Error, c.status, c.says)
			}
		})
	}
	if n := f.countRuns(t); n != 0 {
		t.Errorf("%d runs after refusals, want 0", n)
	}
	// A token scoped to repositories only never makes GitHub look up another name (only
	// AnotherRepository named acme/gadgets).
	for _, r := range f.gh.Requests() {
		if strings.Contains(r.Path, "/repos/acme/gadgets") {
			t.Errorf("GitHub was asked %s %s (%d)", r.Method, r.Path, r.Status)
		}
	}
	// Instructions up to the cap are taken; one byte more is refused by name.
	long := `{"repository": "acme/widgets", "issue": 2, "instructions": "` + strings.Repeat("é", MaxInstructionsBytes/2) + `a"}`
	if status, ans := f.start(t, widgets, long); status != http.StatusBadRequest || !strings.Contains(ans["error"].(string), `"instructions" is longer than`) {
		t.Errorf("instructions over the cap: %d %v", status, ans)
	}
}

// GET reads a run of the token's scope (by repository or by installation) with its state,
// kind, repository, issue and times; any other run, or none, is the same 404.
func TestGetReadsRunsInScope(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, widgets := f.token(t, "widgets", Scope{Repos: []string{"acme/widgets"}})
	_, inst7 := f.token(t, "inst7", Scope{Installations: []int64{7}})
	_, other := f.token(t, "other", Scope{Repos: []string{"other/thing"}})
	status, ans := f.start(t, widgets, `{"repository": "acme/widgets", "issue": 3}`)
	if status != http.StatusCreated {
		t.Fatalf("start: %d %v", status, ans)
	}
	id := strconv.FormatInt(int64(ans["id"].(float64)), 10)
	for _, secret := range []string{widgets, inst7} {
		status, got := f.do(t, http.MethodGet, "/api/v1/runs/"+id, secret, nil)
		if status != http.StatusOK || got["state"] != run.StateQueued || got["kind"] != run.KindIssue ||
			got["repository"] != "acme/widgets" || got["issue"] != float64(3) || got["created_at"] == nil || got["url"] != publicURL+"/runs/"+id {
			t.Errorf("GET: %d %v", status, got)
		}
		if _, ended := got["ended_at"]; ended {
			t.Errorf("a queued run has an end: %v", got)
		}
	}
	for _, c := range []struct{ path, secret string }{{"/api/v1/runs/" + id, other}, {"/api/v1/runs/999999", widgets}} {
		if status, got := f.do(t, http.MethodGet, c.path, c.secret, nil); status != http.StatusNotFound || got["error"] != "no run with this id in the token's scope" {
			t.Errorf("GET %s: %d %v, want 404", c.path, status, got)
		}
	}
	if status, _ := f.do(t, http.MethodGet, "/api/v1/runs/"+id, "", nil); status != http.StatusUnauthorized {
		t.Errorf("GET without a token: %d", status)
	}
}

// Tokens are stored as hashes, listed without secrets, refused once revoked, and made only
// with a name and a scope that are valid.
func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	tokens := NewTokens(pool)
	tok, secret, err := tokens.Create(ctx, "ci-bot", Scope{Repos: []string{"Acme/Widgets", "acme/widgets"}, Installations: []int64{5, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !tokenForm.MatchString(secret) {
		t.Errorf("secret %q is not fna_ and 64 hex digits", secret)
	}
	if got := tok.Scope.String(); got != "installation 5, acme/widgets" {
		t.Errorf("scope %q", got)
	}
	var stored []byte
	var row string
	if err := pool.QueryRow(ctx, `SELECT hash, t::text FROM api_tokens t WHERE id = $1`, tok.ID).Scan(&stored, &row); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, hashOf(secret)) || strings.Contains(row, secret[len(TokenPrefix):]) {
		t.Errorf("stored %x (row %s), want only the SHA-256 of the secret", stored, row)
	}
	if got, err := tokens.Authenticate(ctx, secret); err != nil || got.ID != tok.ID {
		t.Errorf("Authenticate: %+v, %v", got, err)
	}
	if _, _, err := tokens.Create(ctx, "ci-bot", Scope{Installations: []int64{1}}); err == nil || !strings.Contains(err.Error(), `a token named "ci-bot" exists`) {
		t.Errorf("second live ci-bot: %v", err)
	}
	if _, err := tokens.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, secret); err != ErrNoToken {
		t.Errorf("Authenticate after revoke: %v, want ErrNoToken", err)
	}
	again, err := tokens.Revoke(ctx, tok.ID)
	if err != nil || again.RevokedAt == nil {
		t.Errorf("revoking twice: %+v, %v", again, err)
	}
	if _, err := tokens.Revoke(ctx, 424242); err == nil || !strings.Contains(err.Error(), ErrNoToken.Error()) {
		t.Errorf("revoking no token: %v", err)
	}
	// The name is free again once revoked.
	if _, _, err := tokens.Create(ctx, "ci-bot", Scope{Installations: []int64{1}}); err != nil {
		t.Errorf("ci-bot after revoking the first: %v", err)
	}
	list, err := tokens.List(ctx)
	if err != nil || len(list) != 2 || list[0].RevokedAt == nil || list[1].RevokedAt != nil {
		t.Errorf("List: %+v, %v", list, err)
	}
	for _, c := range []struct {
		name  string
		scope Scope
		says  string
	}{
		{"", Scope{Installations: []int64{1}}, "token name"},
		{"has space", Scope{Installations: []int64{1}}, "token name"},
		{"noscope", Scope{}, "a token needs a scope"},
		{"badrepo", Scope{Repos: []string{"acme"}}, `"acme" is not OWNER/REPO`},
		{"badinst", Scope{Installations: []int64{-1}}, "not an installation id"},
	} {
		if _, _, err := tokens.Create(ctx, c.name, c.scope); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Create(%q, %+v): %v, want %q", c.name, c.scope, err, c.says)
		}
	}
}
