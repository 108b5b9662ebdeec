package metrics

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/frognano/frognano/internal/logging"
)

// MinTokenLength is the shortest access token accepted for River's UI.
const MinTokenLength = 16

// AdminConfig configures the admin listener.
type AdminConfig struct {
	// Addr is FROGNANO_METRICS_ADDR, e.g. 127.0.0.1:9090: keep it off the public port.
	Addr string
	// Token is FROGNANO_ADMIN_TOKEN. Empty: River's UI is not served at all (never public).
	// /metrics needs no token; the address is what protects it.
	Token string
	// River is the client River's UI reads and acts through; nil: no UI.
	River  *river.Client[pgx.Tx]
	Logger *slog.Logger
}

// Admin is the listener of /metrics and /riverui.
type Admin struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

// StartAdmin listens on cfg.Addr and serves /metrics, and River's UI under /riverui when a
// token and a River client are given. ctx bounds River's UI's background services; Close
// stops the listener.
func (m *Metrics) StartAdmin(ctx context.Context, cfg AdminConfig) (*Admin, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Token != "" && len(cfg.Token) < MinTokenLength {
		return nil, fmt.Errorf("FROGNANO_ADMIN_TOKEN must be at least %d characters", MinTokenLength)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	switch {
	case cfg.River == nil:
	case cfg.Token == "":
		cfg.Logger.Info("River's UI is off: set FROGNANO_ADMIN_TOKEN to serve it under /riverui")
	default:
		ui, err := riverui.NewHandler(&riverui.HandlerOpts{
			Endpoints: riverui.NewEndpoints(cfg.River, nil),
			Logger:    cfg.Logger,
			Prefix:    "/riverui",
			// Job arguments name repositories and issues; show them only on request.
			JobListHideArgsByDefault: true,
		})
		if err != nil {
			return nil, fmt.Errorf("creating River's UI: %w", err)
		}
		if err := ui.Start(ctx); err != nil {
			return nil, fmt.Errorf("starting River's UI: %w", err)
		}
		guarded := requireToken(cfg.Token, ui)
		mux.Handle("/riverui", guarded)
		mux.Handle("/riverui/", guarded)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on FROGNANO_METRICS_ADDR %s: %w", cfg.Addr, err)
	}
	a := &Admin{ln: ln, log: cfg.Logger, srv: &http.Server{
		Handler: sameOrigin(mux, cfg.Logger), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
	}}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics listener stopped", logging.Err(err))
		}
	}()
	cfg.Logger.Info("metrics listening", "addr", ln.Addr().String(), "riverui", cfg.River != nil && cfg.Token != "")
	return a, nil
}

// Addr is the address the listener is bound to.
func (a *Admin) Addr() net.Addr { return a.ln.Addr() }

// Close stops the listener, letting requests in flight finish for a few seconds.
func (a *Admin) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.srv.Shutdown(ctx)
}

// sameOrigin refuses, with 403, every request that may change something (any method but GET,
// HEAD and OPTIONS) that a browser sends from another origin, whatever its credentials.
// River's UI takes the admin token as a basic-auth password, which a browser keeps and then
// sends by itself with every request to the listener, also with a form that another site's
// page submits to it; and River's UI reads any POST body as JSON, so a form posting text/plain
// shaped as JSON would cancel, delete or retry jobs. A browser says where a request comes
// from: Sec-Fetch-Site (refused unless same-origin), else Origin (refused unless its host is
// the Host asked for); a request with neither is not from another site's page (curl with the
// token) and passes. Requiring Content-Type: application/json instead would break River's
// UI itself, whose buttons post their JSON as text/plain.
func sameOrigin(next http.Handler, log *slog.Logger) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.WarnContext(r.Context(), "refused a request from another site to the admin listener",
			"method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		http.Error(w, "refused: this request comes from another site", http.StatusForbidden)
	}))
	return cop.Handler(next)
}

// requireToken lets a request through only with the token, as a bearer token
// ("Authorization: Bearer TOKEN") or as the password of HTTP basic authentication (any user
// name), which is what a browser asks for. Anything else gets 401 with a basic-auth
// challenge. The comparison takes the same time whatever the guess.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got string
		if _, pw, ok := r.BasicAuth(); ok {
			got = pw
		} else if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			got = b
		}
		sum := sha256.Sum256([]byte(got))
		if token == "" || got == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="frognano", charset="UTF-8"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
