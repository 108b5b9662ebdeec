package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
	"github.com/frognano/frognano/web/webtest"
)

// TestBrowserOAuthRunPages signs people in through the fake GitHub's OAuth (web/auth, as
// frognano serves it) in headless Chromium: alice, who may read the private repository, sees
// its run and finds it in /runs; bob, who may not, gets the same 404 as for a run that does
// not exist, and /runs does not list it. Read access is GitHub's answer to each person's token.
func TestBrowserOAuthRunPages(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	secret := gh.AddRepo("octo", "secret", map[string]string{"a.txt": "a\n"})
	gh.AddInstallation(7, secret)
	gh.SetPrivate(secret, true)
	gh.SetPermission(secret, "alice", "read")

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
	a, err := auth.New(auth.Config{PublicURL: srv.URL, GitHubURL: gh.URL, ClientID: gh.OAuthClientID(),
		ClientSecret: gh.OAuthClientSecret(), SessionKey: strings.Repeat("s", 32), HTTPClient: &http.Client{Timeout: time.Minute},
		Pool: pool})
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

	b := &bundle{pool: pool, srv: srv}
	id := b.run(t, seedRun{RepoID: secret.ID, Owner: "octo", Repo: "secret", State: run.StateSucceeded, Patch: samplePatch})
	b.event(t, id, run.EventStep, step(0, "cat a.txt", "a"))
	page := fmt.Sprintf("%s/runs/%d", srv.URL, id)

	gh.SignInAs("alice")
	ctx := webtest.Browser(t)
	browse(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#diff")))
	if got := webtest.Text(t, ctx, ".who"); !strings.Contains(got, "alice") {
		t.Errorf("signed in as %q", got)
	}
	webtest.Screenshot(t, ctx, "alice")
	browse(t, ctx, chromedp.Navigate(srv.URL+"/runs"), chromedp.WaitVisible(chromedp.CSS("#runs")))
	if n := eval[int](t, ctx, `document.querySelectorAll('#runs tr.run').length`); n != 1 {
		t.Errorf("alice's list has %d runs, want 1", n)
	}

	gh.SignInAs("bob")
	ctx2 := webtest.Browser(t)
	// Through the sign-in at GitHub and back: the page it ends on is the refusal.
	browse(t, ctx2, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("h1")))
	if got := webtest.Text(t, ctx2, "h1"); got != "Not found" {
		t.Errorf("bob sees %q, want Not found", got)
	}
	if eval[bool](t, ctx2, `document.body.textContent.includes('Pages(n int)')`) {
		t.Error("bob's refusal shows the patch")
	}
	webtest.Screenshot(t, ctx2, "bob")
	// Signed in now, the answer itself is a 404.
	status, err := chromedp.RunResponse(ctx2, chromedp.Navigate(page))
	if err != nil {
		t.Fatal(err)
	}
	if status.Status != http.StatusNotFound {
		t.Errorf("bob, signed in, got %d for the run, want 404", status.Status)
	}
	browse(t, ctx2, chromedp.Navigate(srv.URL+"/runs"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if eval[bool](t, ctx2, `document.querySelector('#runs') !== null`) {
		t.Error("bob's list shows runs of a repository he cannot read")
	}
}
