package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/api"
	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/doctor"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/metrics"
	"github.com/frognano/frognano/migrations"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/queue"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/sandbox"
	"github.com/frognano/frognano/server"
	"github.com/frognano/frognano/web"
)

// serveCmd is `frognano serve` (web and workers) and `frognano worker` (workers only).
func serveCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, withWeb bool) error {
	name := "worker"
	if withWeb {
		name = "serve"
	}
	cfg, cfgErr := config.LoadService(getenv, withWeb)
	fs := newFlagSet(name, stderr)
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "runs worked at once by this process; 0 serves webhooks only (FROGNANO_WORKERS)")
	if withWeb {
		fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (FROGNANO_ADDR)")
	}
	bindRunnerFlags(fs, &cfg.Runner)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if cfg.Workers > 0 {
		cfgErr = errors.Join(cfgErr, checkRunnerConfig(cfg.Runner))
	}
	if cfgErr != nil {
		return usageError{"configuration: " + strings.ReplaceAll(cfgErr.Error(), "\n", "; ")}
	}
	if !withWeb && cfg.Workers < 1 {
		return usageError{"frognano worker needs --workers 1 or more"}
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	svc, err := newService(ctx, cfg, log, withWeb)
	if err != nil {
		return err
	}
	return svc.run(ctx, withWeb)
}

// service is the whole graph of one frognano process.
type service struct {
	cfg    config.Service
	log    *slog.Logger
	pool   *pgxpool.Pool
	docker *client.Client // nil without workers
	queue  *queue.Client
	web    *server.Server // nil for `frognano worker`
	pages  *web.Pages     // nil without sign-in configured, and for `frognano worker`
	api    *api.API       // nil for `frognano worker`

	metrics *metrics.Metrics
	admin   *metrics.Admin // nil without FROGNANO_METRICS_ADDR

	// listening, when set, receives the bound address once the server accepts connections:
	// a test hook, so tests can listen on port 0 instead of guessing a free port. Buffered (cap 1).
	listening chan<- net.Addr
}

// newService builds everything from cfg: the pool (migrated when AutoMigrate), and with
// workers the Docker client, the runner and the GitHub App; then the queue and the server.
func newService(ctx context.Context, cfg config.Service, log *slog.Logger, withWeb bool) (svc *service, err error) {
	// Every line the service logs, River's and the runner's included, passes the one
	// redactor: an error may quote what setup or the model printed.
	log = slog.New(githubapp.RedactLogs(log.Handler()))
	pool, err := openPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, setupError{err}
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	if cfg.AutoMigrate {
		if err := migrations.Up(ctx, pool); err != nil {
			return nil, setupError{fmt.Errorf("migrating the database: %w", err)}
		}
	} else if err := migrations.Check(ctx, pool); err != nil {
		return nil, setupError{fmt.Errorf("%w: run `frognano migrate`", err)}
	}
	// Sandboxes carry this start's instance id, so that the reaper can tell ours from a
	// dead predecessor's (same owner) that the engine created after that process died.
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	cfg.Runner.Sandbox.Instance = hex.EncodeToString(rnd[:])
	m := metrics.New()
	instrument(&cfg, m) // before the GitHub App and the runner build their clients
	svc = &service{cfg: cfg, log: log, pool: pool, metrics: m}

	qcfg := cfg.Queue
	qcfg.Workers = cfg.Workers
	qcfg.Logger = log
	qcfg.RiverLogger = log // River's own lines too are JSON on stderr, at the same level
	// What becomes of the pull requests runs publish to (issue 31), counted as they end.
	qcfg.Outcomes = outcome.NewStore(pool).OnEnd(m.PullRequestEnded)
	if cfg.Workers > 0 {
		if err := os.MkdirAll(qcfg.WorkDir, 0o700); err != nil {
			return nil, setupError{fmt.Errorf("creating the work folder: %w", err)}
		}
		docker, err := sandbox.NewClient()
		if err != nil {
			return nil, setupError{err}
		}
		svc.docker = docker
		rcfg := cfg.Runner
		// Workers on every host that shares this database build each environment once.
		rcfg.Env.SharedLock = queue.EnvLock(pool)
		r := runner.New(docker, rcfg, log)
		// The image and executor must be there; the model server may come up later, and
		// each run checks it (a down model server is retried, not failed).
		if err := r.Preflight(ctx); err != nil {
			var down *runner.ModelServerError
			if !errors.As(err, &down) {
				docker.Close()
				return nil, setupError{err}
			}
			log.Warn("model server not reachable yet; runs will retry", logging.Err(err))
		}
		ghcfg := cfg.GitHub
		ghcfg.Logger = log // else githubapp logs through slog.Default, outside the configured handler
		ghcfg.AllowWorkflowChanges = cfg.Runner.AllowWorkflowChanges
		ghcfg.Secrets = cfg.Runner.Secrets                 // Publish checks again what the runner checked
		ghcfg.Audit = runs.NewStore(pool, nil).RecordAudit // every write of a run, in its audit trail
		app, err := githubapp.New(ghcfg)
		if err != nil {
			docker.Close()
			return nil, setupError{fmt.Errorf("configuring the GitHub App: %w", err)}
		}
		qcfg.GitHub = runs.GitHubApp(app)
		qcfg.Runner = runs.AgentRunner(r, cfg.Runner.Leaf.BaseURL)
		qcfg.Reconciler = newReconciler(qcfg.Outcomes, app, cfg, log)
	}
	qc, err := queue.NewClient(pool, qcfg)
	if err != nil {
		svc.closeDocker()
		return nil, setupError{err}
	}
	svc.queue = qc
	if withWeb {
		web, err := server.New(server.Config{
			Intake: qc, Secret: cfg.WebhookSecret, Label: cfg.Label, AppSlug: appSlug(ctx, cfg, log), AppID: cfg.GitHub.AppID, Logger: log,
			ReadyCheck: svc.readyCheck,
		})
		if err != nil {
			svc.closeDocker()
			return nil, setupError{err}
		}
		svc.web = web
		if err := svc.buildPages(); err != nil {
			svc.closeDocker()
			return nil, setupError{err}
		}
		if err := svc.buildAPI(); err != nil {
			svc.closeDocker()
			return nil, setupError{err}
		}
	}
	return svc, nil
}

// newReconciler is the reconciliation of pull requests with GitHub (package outcome) of cfg:
// the queue's periodic round and measure jobs, and `frognano outcomes sync`.
func newReconciler(store *outcome.Store, app *githubapp.App, cfg config.Service, log *slog.Logger) *outcome.Reconciler {
	ocfg := cfg.Outcomes
	ocfg.WorkDir, ocfg.Logger = cfg.Queue.WorkDir, log
	return outcome.NewReconciler(store, outcome.GitHubApp(app), ocfg)
}

// openDatabase is openMigrated on DATABASE_URL, for a command: a usageError when it is not
// set, a setupError when the database cannot be used.
func openDatabase(ctx context.Context, getenv func(string) string) (*pgxpool.Pool, error) {
	url := config.DatabaseURL(getenv)
	if url == "" {
		return nil, usageError{"DATABASE_URL is not set"}
	}
	pool, err := openMigrated(ctx, url)
	if err != nil {
		return nil, setupError{err}
	}
	return pool, nil
}

// openMigrated is openPool for a command that reads or writes frognano's tables (runs, usage,
// budget, stats, tokens, outcomes, export): a database this binary's migrations have not all reached is refused
// with what to run, instead of failing on a table or column that is not there yet.
func openMigrated(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := openPool(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := migrations.Check(ctx, pool); err != nil {
		pool.Close()
		if errors.Is(err, migrations.ErrNotMigrated) {
			return nil, fmt.Errorf("%w: run `frognano migrate` first (`frognano serve` migrates too, with FROGNANO_AUTO_MIGRATE)", err)
		}
		return nil, err
	}
	return pool, nil
}

func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("DATABASE_URL is not a valid PostgreSQL connection string")
	}
	if pcfg.MaxConns < 4 {
		pcfg.MaxConns = 4 // migrations need 2; River's producer and notifier hold some
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL at %s does not answer: %v", githubapp.Redact(url), errors.Unwrap(err))
	}
	return pool, nil
}

func (s *service) readyCheck(ctx context.Context) error {
	if s.docker == nil {
		return nil
	}
	if _, err := s.docker.Ping(ctx); err != nil {
		return fmt.Errorf("docker engine: %w", err)
	}
	// The cheap subset of `frognano doctor`; the sandbox and model probes are too slow here.
	return doctor.ImagePresent(ctx, s.docker, s.cfg.Runner.Sandbox.Image)
}

func (s *service) closeDocker() {
	if s.docker != nil {
		s.docker.Close()
	}
}

// run serves until ctx ends, then shuts down in order: stop taking webhooks, stop the
// workers (bounded soft stop, then cancel), remove sandboxes, close the pool last.
func (s *service) run(ctx context.Context, withWeb bool) error {
	defer s.pool.Close()
	defer s.closeDocker()
	if s.docker != nil {
		if n, err := sandbox.Prune(ctx, s.docker, s.cfg.Runner.Sandbox.Owner); err != nil {
			s.log.Warn("removing sandboxes left by an earlier process", logging.Err(err))
		} else if n > 0 {
			s.log.Info("removed sandboxes left by an earlier process", "count", n)
		}
	}
	if err := s.queue.Start(ctx); err != nil {
		return err
	}
	if err := s.startAdmin(ctx); err != nil {
		_ = s.queue.Stop(context.WithoutCancel(ctx))
		return err
	}
	defer s.stopAdmin()
	if s.docker != nil && s.cfg.ReapInterval > 0 {
		go s.reap(ctx)
	}
	var httpSrv *http.Server
	errc := make(chan error, 1)
	if withWeb {
		httpSrv = s.web.HTTPServer(s.cfg.Addr)
		httpSrv.Handler = s.metrics.Webhooks(s.withAPI(s.withPages(httpSrv, httpSrv.Handler)))
		ln, err := net.Listen("tcp", s.cfg.Addr)
		if err != nil {
			_ = s.queue.Stop(context.WithoutCancel(ctx))
			return setupError{fmt.Errorf("listening on %s: %w", s.cfg.Addr, err)}
		}
		s.log.Info("frognano serving", "addr", ln.Addr().String(), "workers", s.cfg.Workers, "label", s.cfg.Label)
		go func() { errc <- httpSrv.Serve(ln) }()
		if s.listening != nil {
			s.listening <- ln.Addr()
		}
	} else {
		s.log.Info("frognano worker started", "workers", s.cfg.Workers)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.log.Info("shutting down")
	bg := context.WithoutCancel(ctx)
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(bg, s.cfg.ShutdownTimeout)
		if err := httpSrv.Shutdown(sctx); err != nil {
			s.log.Warn("stopping the HTTP server", logging.Err(err))
		}
		cancel()
	}
	if err := s.queue.Stop(bg); err != nil {
		s.log.Warn("stopping the workers", logging.Err(err))
	}
	if s.docker != nil {
		if _, err := sandbox.Prune(bg, s.docker, s.cfg.Runner.Sandbox.Owner); err != nil {
			s.log.Warn("removing sandboxes", logging.Err(err))
		}
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// reap removes, every ReapInterval until ctx ends, the sandboxes of this owner that another
// instance made (see sandbox.PruneOthers).
func (s *service) reap(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := sandbox.PruneOthers(ctx, s.docker, s.cfg.Runner.Sandbox.Owner, s.cfg.Runner.Sandbox.Instance)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("removing sandboxes of an earlier process", logging.Err(err))
		} else if n > 0 {
			s.log.Info("removed sandboxes of an earlier process", "count", n)
		}
	}
}

// migrateCmd is `frognano migrate`: River's migrations, then ours; idempotent.
func migrateCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	url := config.DatabaseURL(getenv)
	if url == "" {
		return usageError{"DATABASE_URL is not set (e.g. postgres://frognano@localhost:5432/frognano)"}
	}
	pool, err := openPool(ctx, url)
	if err != nil {
		return setupError{err}
	}
	defer pool.Close()
	if err := migrations.Up(ctx, pool); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	fmt.Fprintf(stdout, "frognano: database migrated (frognano schema version %d)\n", migrations.Latest())
	return nil
}

// appSlug is the name reviewers mention (@slug) to ask for a follow-up: FROGNANO_APP_SLUG, or
// what GitHub says of the App. When neither answers, comments are ignored (logged once).
func appSlug(ctx context.Context, cfg config.Service, log *slog.Logger) string {
	if cfg.AppSlug != "" || cfg.GitHub.AppID == 0 {
		return cfg.AppSlug
	}
	ghcfg := cfg.GitHub
	ghcfg.Logger = log
	app, err := githubapp.New(ghcfg)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		var info githubapp.AppInfo
		if info, err = app.Self(ctx); err == nil && info.Slug != "" {
			return info.Slug
		}
	}
	log.Warn("the App's slug is unknown, so comments that mention it start no follow-up; set FROGNANO_APP_SLUG", logging.ErrorKey, fmt.Sprint(err))
	return ""
}
