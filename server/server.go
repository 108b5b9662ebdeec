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

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/queue"
)

// DefaultMaxBodyBytes is GitHub's own cap on webhook payloads (25 MB).
const DefaultMaxBodyBytes = 25 << 20

// readyTimeout bounds each readiness check.
const readyTimeout = 3 * time.Second

// Intake is the queue as the webhook handler uses it; *queue.Client implements it (an
// insert-only client is enough). Each method records the delivery and acts on it in one
// transaction, and returns only after that transaction has committed.
type Intake interface {
	Accept(ctx context.Context, d queue.Delivery, req queue.RunRequest) (queue.Accepted, error)
	Cancel(ctx context.Context, d queue.Delivery, repoID int64, issue int, reason string) (queue.Cancelled, error)
	CancelInstallation(ctx context.Context, d queue.Delivery, installationID int64, reason string) (queue.Cancelled, error)
	Record(ctx context.Context, d queue.Delivery, outcome string) (duplicate bool, err error)
	// PullRequestEvent records a pull_request event on a pull request frognano follows
	// (package outcome); any other stores nothing (Ignored).
	PullRequestEvent(ctx context.Context, d queue.Delivery, ev outcome.Event) (queue.PullEventResult, error)
	// RequestStop queues a reviewer's request to stop a pull request's follow-up.
	RequestStop(ctx context.Context, d queue.Delivery, req queue.StopArgs) (duplicate bool, err error)
	// Ready reports whether deliveries can be accepted (the database answers and is migrated).
	Ready(ctx context.Context) error
	// DecideLabel says whether a label on an issue of a repository is its trigger label (the
	// one its settings name, else the operator's), is not, or must be checked (CheckLabel)
	// because the settings were not read lately; LabelRemoved says whether a label coming off
	// an issue stops its run (the trigger label last known, or the one that started the run),
	// and withdraws that label's checks still queued.
	// operator is the operator's label (Config.Label).
	DecideLabel(ctx context.Context, repoID int64, label, operator string) (queue.LabelDecision, error)
	CheckLabel(ctx context.Context, d queue.Delivery, req queue.RunRequest, operator string) error
	LabelRemoved(ctx context.Context, repoID int64, issue int, label, operator string) (bool, error)
	// WithdrawLabelChecks withdraws every label check still queued of an issue closed, deleted
	// or transferred.
	WithdrawLabelChecks(ctx context.Context, repoID int64, issue int) error
}

var _ Intake = (*queue.Client)(nil)

// Config holds the server's explicit dependencies.
type Config struct {
	Intake Intake // required
	Secret []byte // the webhook secret; required
	Label  string // the label that starts a run, e.g. "frognano"
	// AppSlug is the App's slug (GET /app): a comment on a pull request that mentions
	// @AppSlug asks for a follow-up run. "" ignores comments.
	AppSlug string
	// AppID is the App's id (GITHUB_APP_ID): a check suite is frognano's own by this id, never
	// by its slug, a name. 0: by slug.
	AppID  int64
	Logger *slog.Logger
	// ReadyCheck is an optional extra readiness check (e.g. Docker reachable
	// when this process also runs workers).
	ReadyCheck   func(context.Context) error
	MaxBodyBytes int64 // defaults to DefaultMaxBodyBytes
}

// Server serves /webhook, /healthz and /readyz.
type Server struct {
	cfg     Config
	router  chi.Router
	mention *mentions // nil without an AppSlug
}

// New checks cfg and builds the router. It refuses an empty secret: an
// unauthenticated webhook endpoint would let anyone start runs.
func New(cfg Config) (*Server, error) {
	switch {
	case len(cfg.Secret) == 0:
		return nil, errors.New("creating server: the webhook secret is empty; refusing to accept unsigned webhooks")
	case cfg.Label == "":
		return nil, errors.New("creating server: the trigger label is empty")
	case cfg.Intake == nil:
		return nil, errors.New("creating server: the queue (Intake) is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{cfg: cfg}
	if cfg.AppSlug != "" {
		s.mention = mention(cfg.AppSlug)
	}
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

// handleReady: the queue is ready (the database answers and is migrated) and the extra check
// passes.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	checks := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"queue", s.cfg.Intake.Ready},
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
			s.cfg.Logger.WarnContext(r.Context(), "not ready", "check", c.name, logging.Err(err))
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
