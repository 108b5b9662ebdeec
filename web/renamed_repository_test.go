package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
)

// oauthBundle is the run pages as frognano serves them with sign-in through GitHub (web/auth's
// OAuth against the fake GitHub), on a clock the test moves.
type oauthBundle struct {
	*bundle
	gh    *githubtest.Server
	clock *testClock
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func setupOAuth(t *testing.T) *oauthBundle {
	t.Helper()
	gh := githubtest.New(t)
	pool := dbtest.New(t)
	var mu sync.Mutex
	var handler http.Handler = http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	gh.SetOAuthCallback(srv.URL + "/oauth/callback")
	clock := &testClock{now: time.Now()}
	a, err := auth.New(auth.Config{PublicURL: srv.URL, GitHubURL: gh.URL, ClientID: gh.OAuthClientID(),
		ClientSecret: gh.OAuthClientSecret(), SessionKey: strings.Repeat("s", 32), Now: clock.Now,
		HTTPClient: &http.Client{Timeout: time.Minute}, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Runs: run.NewStore(pool, nil), Stats: stats.NewStore(pool), Auth: a, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	handler = p.handler()
	mu.Unlock()
	return &oauthBundle{bundle: &bundle{pool: pool, pages: p, srv: srv}, gh: gh, clock: clock}
}

// person is one person's browser as an HTTP client: its own cookies, following redirects, so
// a page that needs a sign-in goes through the fake GitHub's OAuth and back.
func (o *oauthBundle) person(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: time.Minute}
}

// getAs fetches path with c, signing in as login at GitHub if the page asks for it, and
// returns the final status and body.
func (o *oauthBundle) getAs(t *testing.T, c *http.Client, login, path string) (int, string) {
	t.Helper()
	o.gh.SignInAs(login)
	resp, err := c.Get(o.srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s as %s: %v", path, login, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s as %s: %v", path, login, err)
	}
	if !strings.HasPrefix(resp.Request.URL.String(), o.srv.URL+"/") {
		t.Fatalf("GET %s as %s ended at %s", path, login, resp.Request.URL)
	}
	return resp.StatusCode, string(body)
}

// TestRunPagesFollowTheRepositoryNotItsName carries out the name-squatting attack on the run
// pages: a run of the private repository acme/secret (GitHub id X), which alice may read; the
// name is then freed (the repository renamed, its organization renamed, or the repository
// deleted), and mallory creates her own private acme/secret (another id), which she
// administers. Access must follow the id the run stored: mallory is refused the run exactly as
// if it did not exist, in the run page, its event stream, the list and the list filtered by
// the name; alice still reads it after a rename, under its new name's filter too, and nobody
// reads it once the repository is deleted.
func TestRunPagesFollowTheRepositoryNotItsName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		free    func(gh *githubtest.Server, secret *githubtest.Repo)
		newName string // the repository's name afterwards; "" when it was deleted
	}{
		{"RepositoryRenamed", func(gh *githubtest.Server, r *githubtest.Repo) { gh.RenameRepo(r, "acme", "archive") }, "acme/archive"},
		{"OwnerRenamed", func(gh *githubtest.Server, _ *githubtest.Repo) { gh.RenameOwner("acme", "acme-corp") }, "acme-corp/secret"},
		{"RepositoryDeleted", func(gh *githubtest.Server, r *githubtest.Repo) { gh.DeleteRepo(r) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := setupOAuth(t)
			secret := o.gh.AddRepo("acme", "secret", map[string]string{"pager.go": "package pager\n"})
			o.gh.AddInstallation(7, secret)
			o.gh.SetPrivate(secret, true)
			o.gh.SetPermission(secret, "alice", "read")
			id := o.run(t, seedRun{RepoID: secret.ID, Owner: "acme", Repo: "secret", State: run.StateSucceeded, Patch: samplePatch})
			page := fmt.Sprintf("/runs/%d", id)

			alice := o.person(t)
			if status, body := o.getAs(t, alice, "alice", page); status != http.StatusOK || !strings.Contains(body, "Pages(n int)") {
				t.Fatalf("alice before the name was freed: %d", status)
			}

			tt.free(o.gh, secret)
			squat := o.gh.AddRepo("acme", "secret", map[string]string{"x": "x\n"})
			o.gh.AddInstallation(8, squat)
			o.gh.SetPrivate(squat, true)
			o.gh.SetPermission(squat, "mallory", "admin")
			if squat.ID == secret.ID {
				t.Fatal("the squatted repository has the old id")
			}
			// Past the read cache: every answer below is GitHub's of now.
			o.clock.Add(auth.DefaultReadCacheTTL + time.Second)

			mallory := o.person(t)
			status, refused := o.getAs(t, mallory, "mallory", page)
			if status != http.StatusNotFound || strings.Contains(refused, "Pages(n int)") {
				t.Errorf("mallory, who owns the new acme/secret, got %d for the old repository's run", status)
			}
			if _, missing := o.getAs(t, mallory, "mallory", fmt.Sprintf("/runs/%d", id+1000)); refused != missing {
				t.Error("mallory's refusal differs from a missing run's: it tells that the run exists")
			}
			if status, _ := o.getAs(t, mallory, "mallory", page+"/events"); status != http.StatusNotFound {
				t.Errorf("mallory's event stream of the run: %d, want 404", status)
			}
			for _, list := range []string{"/runs", "/runs?repo=acme%2Fsecret"} {
				if _, body := o.getAs(t, mallory, "mallory", list); strings.Contains(body, fmt.Sprintf(`data-run="%d"`, id)) {
					t.Errorf("mallory's %s lists the old repository's run", list)
				}
			}

			status, body := o.getAs(t, alice, "alice", page)
			if tt.newName == "" {
				if status != http.StatusNotFound || strings.Contains(body, "Pages(n int)") {
					t.Errorf("alice, the repository deleted: %d, want 404", status)
				}
				return
			}
			if status != http.StatusOK || !strings.Contains(body, "Pages(n int)") {
				t.Errorf("alice, who reads the renamed repository %s: %d, want the run", tt.newName, status)
			}
			if _, body := o.getAs(t, alice, "alice", "/runs?repo="+strings.ReplaceAll(tt.newName, "/", "%2F")); !strings.Contains(body, fmt.Sprintf(`data-run="%d"`, id)) {
				t.Errorf("alice's list of %s lacks the run stored under the old name", tt.newName)
			}
			if _, body := o.getAs(t, alice, "alice", "/runs?repo=acme%2Fsecret"); strings.Contains(body, fmt.Sprintf(`data-run="%d"`, id)) {
				t.Error("alice's list of mallory's acme/secret shows the old repository's run")
			}
		})
	}
}
