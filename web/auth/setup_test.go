package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
)

// clock is a test clock that only moves when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer collects the log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bundle is a frognano web server with auth mounted and one protected page,
// GET /runs/{owner}/{repo}, standing in for package web's run pages.
type bundle struct {
	gh     *githubtest.Server
	auth   Authenticator
	srv    *httptest.Server
	clock  *clock
	log    *syncBuffer
	public *githubtest.Repo // anyone may read
	secret *githubtest.Repo // private: alice reads, bob does not
}

type option func(*Config)

// setup starts the fake GitHub and frognano's pages; with token "" it signs in with OAuth.
func setup(t *testing.T, token string, opts ...option) *bundle {
	t.Helper()
	gh := githubtest.New(t)
	b := &bundle{gh: gh, clock: &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}, log: &syncBuffer{}}
	b.public = gh.AddRepo("octo", "public", map[string]string{"a.txt": "a\n"})
	b.secret = gh.AddRepo("octo", "secret", map[string]string{"b.txt": "b\n"})
	gh.AddInstallation(7, b.public, b.secret)
	gh.SetPrivate(b.secret, true)
	gh.SetPermission(b.secret, "alice", "read")

	var handler http.Handler = http.NotFoundHandler()
	var mu sync.Mutex
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	gh.SetOAuthCallback(b.srv.URL + "/oauth/callback")
	cfg := Config{
		PublicURL: b.srv.URL, GitHubURL: gh.URL, SessionKey: strings.Repeat("k", 32), Pool: dbtest.New(t),
		Logger: slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelDebug})), Now: b.clock.Now,
	}
	if token == "" {
		cfg.ClientID, cfg.ClientSecret = gh.OAuthClientID(), gh.OAuthClientSecret()
	} else {
		cfg.Token = token
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.auth = a
	r := chi.NewRouter()
	a.Routes(r)
	r.Get("/runs/{owner}/{repo}", func(w http.ResponseWriter, r *http.Request) {
		v, ok := a.Viewer(r)
		if !ok {
			http.Redirect(w, r, LoginPath(r.URL.Path), http.StatusSeeOther)
			return
		}
		owner, repo := chi.URLParam(r, "owner"), chi.URLParam(r, "repo")
		_, can, err := a.FindRepo(r.Context(), v, owner, repo)
		switch {
		case errors.Is(err, ErrSignedOut):
			http.Redirect(w, r, LoginPath(r.URL.Path), http.StatusSeeOther)
		case err != nil:
			http.Error(w, "cannot check access", http.StatusBadGateway)
		case !can:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `<html><body><h1 id="title">No such run</h1><p id="who">%s</p></body></html>`, v)
		default:
			fmt.Fprintf(w, `<html><body><h1 id="title">Runs of %s/%s</h1><p id="who">signed in as %s</p></body></html>`, owner, repo, v)
		}
	})
	mu.Lock()
	handler = r
	mu.Unlock()
	return b
}

// browser is an HTTP client with its own cookies; it follows redirects unless noFollow.
func (b *bundle) browser(t *testing.T, follow bool) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

// get fetches url and returns the status, the final address and the body.
func get(t *testing.T, c *http.Client, url string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Request.URL.String(), string(body)
}

// signIn signs c in as login through the fake GitHub and returns the protected page's body.
func (b *bundle) signIn(t *testing.T, c *http.Client, login, page string) (int, string) {
	t.Helper()
	b.gh.SignInAs(login)
	status, _, body := get(t, c, b.srv.URL+page)
	return status, body
}
