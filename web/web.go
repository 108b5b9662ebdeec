// Package web owns frognano's run pages: /runs (recent runs, filtered by repository and
// state), /runs/{id} (one run: its timeline, task, steps with their tool calls and
// observations, the patch, the tests before and after, its facts) and /runs/{id}/events (the
// same run's progress as server-sent events, so a running run updates in the browser), and
// /stats (what became of frognano's pull requests: package stats' figures and two charts
// drawn as inline SVG on the server). It reads what the worker stores in PostgreSQL (runs
// and run_events) through run.Reader, the only channel between a worker and the web server,
// and the figures (runs and pull_outcomes) through stats.Reader.
//
// web never shows anything of a run to a person who is not signed in or who cannot read the
// run's repository (a run they may not read is answered exactly like one that does not
// exist; a figure counts only the repositories the person may read), never renders a token or secret (every text from a run passes githubapp.Redact and
// html/template's escaping, and bidirectional-text controls are shown as inert markers), and
// never changes anything: its pages answer GET only.
package web

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
)

// Defaults of Config.
const (
	defaultPollInterval = time.Second
	// defaultMaxStreams is how many event streams may be open at once.
	defaultMaxStreams = 200
	// defaultMaxStreamsPerViewer is how many of them one signed-in person may hold (a few
	// tabs), so that nobody can take every stream from the others.
	defaultMaxStreamsPerViewer = 16
	// defaultListLimit is how many runs /runs shows at most.
	defaultListLimit = 50
	// scanLimit is how many of the newest matching runs /runs reads to find the ones the
	// viewer may read.
	scanLimit = 500
	// heartbeatEvery keeps proxies from closing an idle event stream.
	heartbeatEvery = 15 * time.Second
	// maxStream ends an event stream after this long; the browser reconnects where it was.
	maxStream = time.Hour
	// defaultRecheckInterval is how often an open event stream asks again whether its viewer
	// may read the run (web/auth remembers answers about as long).
	defaultRecheckInterval = 5 * time.Minute
)

// Config holds the pages' dependencies.
type Config struct {
	// Runs is where the pages read runs and their events (required): a *run.Store, which reads
	// what the workers write in PostgreSQL.
	Runs run.Reader
	// Stats is where /stats and the runs list read the figures and what became of a run's
	// pull request (required): a *stats.Store.
	Stats stats.Reader
	Auth  auth.Authenticator // required: nothing of a run is public (who is signed in, what they may read)
	// PollInterval is how often an event stream looks for new events (default 1 s).
	PollInterval time.Duration
	// RecheckInterval is how often an open event stream asks again whether its viewer may
	// read the run (default 5 minutes; web/auth remembers answers about as long).
	RecheckInterval time.Duration
	ListLimit       int // how many runs /runs shows at most (default 50)
	// MaxStreams bounds the event streams open at once in this process (each polls the
	// database); more are answered 503, and the page reloads after a while to try again
	// (default 200).
	MaxStreams int
	// MaxStreamsPerViewer bounds the streams one login holds at once (default 16, a few tabs,
	// so that nobody can take every stream from the others); everyone signed in with the
	// shared token is one login.
	MaxStreamsPerViewer int
	Logger              *slog.Logger
}

// Pages serves the run pages.
type Pages struct {
	cfg       Config
	tmpl      *template.Template
	done      chan struct{} // closed by Close: open event streams end
	closeOnce sync.Once
	streams   chan struct{} // one token per open event stream, at most MaxStreams
	mu        sync.Mutex
	byViewer  map[string]int // open streams per login, each at most MaxStreamsPerViewer
}

// holdStream takes one of login's streams, or reports false when login holds
// MaxStreamsPerViewer already; release gives it back.
func (p *Pages) holdStream(login string) (release func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byViewer[login] >= p.cfg.MaxStreamsPerViewer {
		return nil, false
	}
	p.byViewer[login]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.byViewer[login]--; p.byViewer[login] <= 0 {
			delete(p.byViewer, login)
		}
	}, true
}

// Close ends every open event stream (the browsers reconnect to whichever server is up) and
// makes new ones end at once. Register it with http.Server.RegisterOnShutdown: Shutdown waits
// for open requests, and a stream would otherwise hold it until its timeout.
func (p *Pages) Close() {
	p.closeOnce.Do(func() { close(p.done) })
}

// New checks cfg and parses the templates.
func New(cfg Config) (*Pages, error) {
	switch {
	case cfg.Runs == nil:
		return nil, errors.New("run pages: a run.Reader is required")
	case cfg.Stats == nil:
		return nil, errors.New("run pages: a stats.Reader is required")
	case cfg.Auth == nil:
		return nil, errors.New("run pages: an Authenticator is required (nothing of a run is public)")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.RecheckInterval <= 0 {
		cfg.RecheckInterval = defaultRecheckInterval
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = defaultMaxStreams
	}
	if cfg.MaxStreamsPerViewer <= 0 {
		cfg.MaxStreamsPerViewer = defaultMaxStreamsPerViewer
	}
	if cfg.ListLimit <= 0 {
		cfg.ListLimit = defaultListLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	return &Pages{cfg: cfg, tmpl: t, done: make(chan struct{}), streams: make(chan struct{}, cfg.MaxStreams), byViewer: map[string]int{}}, nil
}

// Routes mounts the sign-in routes and GET /runs, /runs/{id}, /runs/{id}/events,
// /runs/style.css and /stats on r.
func (p *Pages) Routes(r chi.Router) {
	p.cfg.Auth.Routes(r)
	r.Group(func(r chi.Router) {
		r.Use(securityHeaders)
		r.Get("/runs/style.css", serveStyle)
		r.Get("/runs", p.handleList)
		r.Get("/runs/{id:[0-9]+}", p.handleRun)
		r.Get("/runs/{id:[0-9]+}/events", p.handleEvents)
		r.Get("/stats", p.handleStats)
	})
}

// handler returns a router with the pages alone.
func (p *Pages) handler() http.Handler {
	r := chi.NewRouter()
	p.Routes(r)
	return r
}

// securityHeaders: pages hold private code and are never cached, framed, sniffed or sent as a
// referrer; the content security policy allows the page's own stylesheet and the one script
// with this response's nonce (set by the handler that renders it), nothing else.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// viewer returns the signed-in person, or answers the request itself (a sign-in redirect for
// a page, 401 for the event stream) and returns ok false.
func (p *Pages) viewer(w http.ResponseWriter, r *http.Request, page bool) (auth.Viewer, bool) {
	v, ok := p.cfg.Auth.Viewer(r)
	if ok {
		return v, true
	}
	p.signIn(w, r, page)
	return auth.Viewer{}, false
}

func (p *Pages) signIn(w http.ResponseWriter, r *http.Request, page bool) {
	if !page {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, auth.LoginPath(r.URL.RequestURI()), http.StatusSeeOther)
}

// canRead asks the Authenticator about the run's repository by its id (never its stored
// name, which another repository may have taken since); an error refuses, and a sign-in that
// stopped working sends the person to sign in again (reported by ok false, handled true).
func (p *Pages) canRead(w http.ResponseWriter, r *http.Request, v auth.Viewer, rec run.Record, page bool) (ok, handled bool) {
	can, err := p.cfg.Auth.CanRead(r.Context(), v, rec.RepoID)
	if errors.Is(err, auth.ErrSignedOut) {
		p.signIn(w, r, page)
		return false, true
	}
	if err != nil {
		p.cfg.Logger.WarnContext(r.Context(), "checking read access", "viewer", v, logging.RunID(rec.ID), "repo_id", rec.RepoID, logging.Err(err))
		http.Error(w, "could not check your access to this repository; try again later", http.StatusBadGateway)
		return false, true
	}
	return can, false
}

// notFound is the answer for a run that does not exist and for one the viewer may not read.
func (p *Pages) notFound(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusNotFound, "notfound", page{Title: "Not found"})
}
