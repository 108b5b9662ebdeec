// Package server owns frognano's HTTP surface: the GitHub webhook endpoint
// and the health endpoints. Handlers are thin: verify, decode, hand off to the
// queue package in one database transaction, answer.
//
// server never answers 2xx to a delivery it has not durably committed, never
// stores anything from a delivery whose signature does not verify, and never
// logs the webhook secret or a payload body.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/migrations"
)

// DefaultMaxBodyBytes is GitHub's own cap on webhook payloads (25 MB).
const DefaultMaxBodyBytes = 25 << 20

// readyTimeout bounds each readiness check.
const readyTimeout = 3 * time.Second

// Config holds the server's explicit dependencies.
type Config struct {
	Pool   *pgxpool.Pool
	River  *river.Client[pgx.Tx] // may be insert-only
	Secret []byte                // the webhook secret; required
	Label  string                // the label that starts a run, e.g. "frognano"
	Logger *slog.Logger
	// ReadyCheck is an optional extra readiness check (e.g. Docker reachable
	// when this process also runs workers).
	ReadyCheck   func(context.Context) error
	MaxBodyBytes int64 // defaults to DefaultMaxBodyBytes
}

// Server serves /webhook, /healthz and /readyz.
type Server struct {
	cfg    Config
	router chi.Router
}

// New checks cfg and builds the router. It refuses an empty secret: an
// unauthenticated webhook endpoint would let anyone start runs.
func New(cfg Config) (*Server, error) {
	switch {
	case len(cfg.Secret) == 0:
		return nil, errors.New("creating server: the webhook secret is empty; refusing to accept unsigned webhooks")
	case cfg.Label == "":
		return nil, errors.New("creating server: the trigger label is empty")
	case cfg.Pool == nil || cfg.River == nil:
		return nil, errors.New("creating server: a database pool and a River client are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{cfg: cfg}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Post("/webhook", s.handleWebhook)
	r.Get("/healthz", s.handleHealth)
	r.Get("/readyz", s.handleReady)
	s.router = r
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// HTTPServer returns an http.Server for s with the timeouts a public
// endpoint needs (slow-header and slow-body clients cannot hold connections).
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a 25 MB body on a slow link
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReady: the database answers, is migrated, and the extra check passes.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	checks := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"database", func(ctx context.Context) error { return s.cfg.Pool.Ping(ctx) }},
		{"migrations", func(ctx context.Context) error { return migrations.Check(ctx, s.cfg.Pool) }},
	}
	if s.cfg.ReadyCheck != nil {
		checks = append(checks, struct {
			name string
			fn   func(context.Context) error
		}{"extra", s.cfg.ReadyCheck})
	}
	for _, c := range checks {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := c.fn(ctx)
		cancel()
		if err != nil {
			s.cfg.Logger.WarnContext(r.Context(), "not ready", "check", c.name, "error", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "check": c.name})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// An encoding error means the client went away: nothing useful to do.
	_ = json.NewEncoder(w).Encode(v)
}
