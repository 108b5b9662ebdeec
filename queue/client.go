package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/migrations"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/settings"
)

// Defaults for Config. River's own defaults bite here: a 1 minute job
// timeout, a rescuer that re-runs jobs after 1 hour even while they still
// work, and a soft stop that waits forever.
const (
	DefaultJobTimeout           = 90 * time.Minute
	DefaultPerInstallationLimit = 2
	DefaultStatusEditInterval   = 10 * time.Second
	DefaultDeliveryRetention    = 10 * 24 * time.Hour
	DefaultCleanupInterval      = time.Hour
	DefaultSoftStopTimeout      = 30 * time.Second
	DefaultCancelWait           = time.Minute
	DefaultFetchCooldown        = 20 * time.Millisecond
	DefaultFetchPollInterval    = time.Second

	// MinDeliveryRetention: GitHub Enterprise Server redelivers for 7 days.
	MinDeliveryRetention = 8 * 24 * time.Hour
	// rescueMargin is added to the job timeout so that River's rescuer never
	// re-runs a job that is still within its time budget.
	rescueMargin = 30 * time.Minute
)

// Config configures the queue client. Zero values take the defaults above.
type Config struct {
	// Workers is how many runs this process works at once, exactly (the small jobs have a
	// queue and workers of their own, SmallWorkers); 0 makes an insert-only client (a
	// web-only process), which needs no GitHub/Runner.
	Workers int
	GitHub  run.GitHub
	Runner  run.Runner

	JobTimeout           time.Duration // whole-run budget, enforced by River
	PerInstallationLimit int           // running runs per installation; more are parked until one ends (parked.go)
	StatusEditInterval   time.Duration // minimum time between progress edits of the status comment
	DeliveryRetention    time.Duration // how long delivery ids are remembered (>= 8 days)
	CleanupInterval      time.Duration
	SoftStopTimeout      time.Duration // Stop waits this long for running jobs, then cancels them
	// CancelWait bounds how long Stop then waits for the cancelled jobs to return (remove
	// their sandboxes, queue their runs again, edit their status comments); default
	// DefaultCancelWait, set by no FROGNANO_* variable. Those steps have bounds of their own, so
	// it is a ceiling for a job that hangs, not a budget: it is not SoftStopTimeout, which is
	// set short where a fast stop matters, while a clean-up on a busy host can take longer, and
	// a process that went on without it would close its pool under it (its run left running).
	CancelWait        time.Duration
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
	// WorkDir is where host clones are made (a temporary directory per run). It should be
	// this process's own (see Owner): Start removes the clones a crashed process left there.
	WorkDir string
	// Owner names this worker process among those sharing the database (the sandbox owner
	// label, by default the host name). River's client id starts with it, so that at Start
	// the jobs a crashed process of the same owner left `running` are taken back at once
	// instead of after River's rescuer delay (JobTimeout + 30 minutes). Two live processes
	// must never share an owner.
	Owner string
	// Label is the label that starts a run; a failed run removes it from its issue, so that
	// adding it again retries. "" leaves labels alone.
	Label string
	// Budgets cap the runs and tokens of an installation and of each repository per UTC day
	// (FROGNANO_BUDGET_*; zero fields: no limit); the budgets table overrides them per
	// installation (run/budget.go).
	Budgets run.Budgets
	// CIFollowUps is how many follow-up runs the repository's failed CI may start on one pull
	// request: 0 means run.DefaultCIFollowUps, a negative value none.
	CIFollowUps int
	// PublicURL is the base address of the run pages (FROGNANO_PUBLIC_URL): the status
	// comment, the pull request body and the check run link to PublicURL/runs/ID. "" : no links.
	PublicURL string
	// Ceilings are the operator's limits on what a repository's settings file may set
	// (FROGNANO_ATTEMPTS, the models offered by name, the runs per day): run.Config.Ceilings.
	Ceilings settings.Ceilings
	// Outcomes records what becomes of the pull requests runs publish to (the run's end,
	// pull_request events); nil: one of this pool (outcome.NewStore), with no hook.
	Outcomes *outcome.Store
	// Reconciler, when set, works the outcome jobs: the measure of a merged pull request and,
	// every OutcomesInterval (0: never), the reconciliation round (outcomes.go). nil: an event's
	// merge queues a measure job that a process with one works.
	Reconciler       *outcome.Reconciler
	OutcomesInterval time.Duration
	// Logger receives the lines of the queue and of the runs it works; nil means
	// slog.Default(). NewClient wraps it, and RiverLogger, in githubapp.RedactLogs.
	Logger *slog.Logger
	// endStep is run.Config.EndStep: this package's tests stop a worker at a step of a run's
	// end with it. Nothing else sets it.
	endStep func(ctx context.Context, runID int64, step string)
	// RiverLogger receives River's own logs; nil means Logger, so that River writes through
	// the service's handler (JSON on stderr, at the configured level) and never a second
	// format into the same stream.
	RiverLogger *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.JobTimeout, DefaultJobTimeout)
	def(&c.DeliveryRetention, DefaultDeliveryRetention)
	def(&c.CleanupInterval, DefaultCleanupInterval)
	def(&c.SoftStopTimeout, DefaultSoftStopTimeout)
	def(&c.CancelWait, DefaultCancelWait)
	def(&c.FetchCooldown, DefaultFetchCooldown)
	def(&c.FetchPollInterval, DefaultFetchPollInterval)
	// StatusEditInterval may be set negative to disable throttling (tests).
	if c.StatusEditInterval == 0 {
		c.StatusEditInterval = DefaultStatusEditInterval
	}
	if c.PerInstallationLimit <= 0 {
		c.PerInstallationLimit = DefaultPerInstallationLimit
	}
	if c.WorkDir == "" {
		c.WorkDir = os.TempDir()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.RiverLogger == nil {
		c.RiverLogger = c.Logger
	}
	// Every line of the queue, the run and River goes through the one redactor, whatever
	// logger the caller hands in (cmd/frognano's is wrapped already, and is not wrapped
	// twice): log calls here and in run never redact by hand.
	c.Logger = slog.New(githubapp.RedactLogs(c.Logger.Handler()))
	c.RiverLogger = slog.New(githubapp.RedactLogs(c.RiverLogger.Handler()))
	return c
}

// Client is the River client plus frognano's lifecycle rules. Its intake methods (Accept,
// Cancel, CancelInstallation, Record) are what the webhook server calls; each is one
// transaction that has committed when it returns.
type Client struct {
	river *river.Client[pgx.Tx]
	pool  *pgxpool.Pool
	runs  *run.Store // the runs' only writer: the intake transactions write them through it
	// outcomes is pull_outcomes' only writer: PullRequestEvent writes through it.
	outcomes *outcome.Store
	cfg      Config
}

// NewClient builds the River client. With cfg.Workers > 0 it registers the run
// worker and the periodic delivery cleanup; otherwise it can only insert.
func NewClient(pool *pgxpool.Pool, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Outcomes == nil {
		cfg.Outcomes = outcome.NewStore(pool)
	}
	if cfg.DeliveryRetention < MinDeliveryRetention {
		return nil, fmt.Errorf("delivery retention %s is below the minimum %s (GitHub redelivers for 7 days)", cfg.DeliveryRetention, MinDeliveryRetention)
	}
	rc := &river.Config{
		Logger:               cfg.RiverLogger,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.JobTimeout + rescueMargin,
		SoftStopTimeout:      cfg.SoftStopTimeout,
		FetchCooldown:        cfg.FetchCooldown,
		FetchPollInterval:    cfg.FetchPollInterval,
		MaxAttempts:          MaxAttempts,
		// River keeps each failed attempt's error text in river_job.errors.
		// Every job's ends wake parked runs under this process's limit (parked.go).
		Middleware: []rivertype.Middleware{river.WorkerMiddlewareFunc(redactJobError), withLimit(cfg.PerInstallationLimit)},
	}
	var labelCheck *labelCheckWorker
	if cfg.Workers > 0 {
		if cfg.GitHub == nil || cfg.Runner == nil {
			return nil, errors.New("creating queue client: workers need both a GitHub and a Runner")
		}
		workers := river.NewWorkers()
		if err := river.AddWorkerSafely(workers, &runWorker{pool: pool, cfg: cfg}); err != nil {
			return nil, fmt.Errorf("registering run worker: %w", err)
		}
		if err := river.AddWorkerSafely(workers, &cleanupWorker{pool: pool, retention: cfg.DeliveryRetention, log: cfg.Logger, label: cfg.Label, publicURL: cfg.PublicURL}); err != nil {
			return nil, fmt.Errorf("registering cleanup worker: %w", err)
		}
		if err := river.AddWorkerSafely(workers, &statusWorker{pool: pool, gh: cfg.GitHub, log: cfg.Logger}); err != nil {
			return nil, fmt.Errorf("registering status worker: %w", err)
		}
		if err := river.AddWorkerSafely(workers, &stopWorker{pool: pool, gh: cfg.GitHub, log: cfg.Logger}); err != nil {
			return nil, fmt.Errorf("registering status worker: %w", err)
		}
		if err := river.AddWorkerSafely(workers, &activeReplyWorker{gh: cfg.GitHub, publicURL: cfg.PublicURL, log: cfg.Logger}); err != nil {
			return nil, fmt.Errorf("registering active-run reply worker: %w", err)
		}
		labelCheck = &labelCheckWorker{gh: cfg.GitHub, log: cfg.Logger}
		if err := river.AddWorkerSafely(workers, labelCheck); err != nil {
			return nil, fmt.Errorf("registering label check worker: %w", err)
		}
		rc.Workers = workers
		// The runs have a queue of their own, as wide as Workers; the small jobs theirs. A small
		// job left on the runs' queue by an older frognano is still worked there (the workers
		// are registered per kind), in a run's place: fewer runs for a while, never more.
		rc.Queues = map[string]river.QueueConfig{QueueName: {MaxWorkers: cfg.Workers}, SmallQueueName: {MaxWorkers: SmallWorkers}}
		rc.PeriodicJobs = []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(cfg.CleanupInterval),
				func() (river.JobArgs, *river.InsertOpts) { return cleanupArgs{}, nil },
				&river.PeriodicJobOpts{ID: "frognano_cleanup_deliveries", RunOnStart: true}),
		}
		if err := addOutcomeWorkers(workers, rc, cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Owner != "" {
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		rc.ID = cfg.Owner + "/" + hex.EncodeToString(rnd[:])
	}
	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("creating River client: %w", err)
	}
	c := &Client{river: client, pool: pool, runs: store(pool), outcomes: cfg.Outcomes, cfg: cfg}
	if labelCheck != nil {
		labelCheck.client = c
	}
	return c, nil
}

// River returns the underlying River client, for tests that subscribe to its events.
func (c *Client) River() *river.Client[pgx.Tx] { return c.river }

// Ready reports whether the database answers and carries every migration this binary knows
// (migrations.Check): what the service needs before it may accept a delivery.
func (c *Client) Ready(ctx context.Context) error {
	if err := c.pool.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if err := migrations.Check(ctx, c.pool); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return nil
}

// Start starts working jobs (a no-op for an insert-only client).
func (c *Client) Start(ctx context.Context) error {
	if c.cfg.Workers == 0 {
		return nil
	}
	if c.cfg.Owner != "" {
		n, err := c.reclaim(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			c.cfg.Logger.InfoContext(ctx, "took back runs a crashed process of this owner left running", "count", n, "owner", c.cfg.Owner)
		}
	}
	c.removeStaleClones(ctx)
	if err := c.river.Start(ctx); err != nil {
		return fmt.Errorf("starting River client: %w", err)
	}
	return nil
}

// Stop lets running jobs finish for at most SoftStopTimeout (bounded further
// by ctx), then cancels them; a cancelled run goes back to queued without
// spending an attempt and resumes when a worker starts again. Stop returns once
// the cancelled jobs have returned (their sandboxes removed, their runs queued),
// or with an error after CancelWait.
func (c *Client) Stop(ctx context.Context) error {
	if c.cfg.Workers == 0 {
		return nil
	}
	softCtx, cancel := context.WithTimeout(ctx, c.cfg.SoftStopTimeout)
	defer cancel()
	err := c.river.Stop(softCtx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping River client: %w", err)
	}
	c.cfg.Logger.WarnContext(ctx, "soft stop timed out; cancelling running jobs", "timeout", c.cfg.SoftStopTimeout)
	// A fresh, bounded context: ctx may be the one that just expired.
	hardCtx, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.CancelWait)
	defer cancelHard()
	if err := c.river.StopAndCancel(hardCtx); err != nil {
		return fmt.Errorf("stopping River client after cancelling jobs: %w", err)
	}
	return nil
}

// reclaim makes the run jobs that a previous process of this owner was working when it died
// available again. A job in state running whose latest attempt was made by a client of this
// owner cannot be running any more: this process is starting, and owners are unique among
// live processes. The attempt it spent counts, as it would after River's rescuer. Only a run's
// current job is taken back: the old job of a parked run that a wake gave a new one must
// never work it again (parked.go).
func (c *Client) reclaim(ctx context.Context) (int64, error) {
	tag, err := c.pool.Exec(ctx, `
		UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE state = 'running' AND kind = $1
		  AND cardinality(attempted_by) > 0
		  AND left(attempted_by[cardinality(attempted_by)], length($2) + 1) = $2 || '/'
		  AND EXISTS (SELECT 1 FROM runs r WHERE r.job_id = river_job.id)`,
		RunArgs{}.Kind(), c.cfg.Owner)
	if err != nil {
		return 0, fmt.Errorf("taking back runs left by a crashed process: %w", err)
	}
	return tag.RowsAffected(), nil
}

// removeStaleClones deletes host clones left in WorkDir by a process that died mid-run.
func (c *Client) removeStaleClones(ctx context.Context) {
	if c.cfg.Owner == "" {
		return // a shared WorkDir may hold live clones of other processes
	}
	stale, _ := filepath.Glob(filepath.Join(c.cfg.WorkDir, "frognano-run-*"))
	for _, dir := range stale {
		if err := os.RemoveAll(dir); err != nil {
			c.cfg.Logger.WarnContext(ctx, "removing a stale clone", "dir", dir, logging.Err(err))
		}
	}
	if len(stale) > 0 {
		c.cfg.Logger.InfoContext(ctx, "removed clones left by an earlier process", "count", len(stale))
	}
}

// redactJobError makes the text River stores of a job's error pass the run's redactor
// (githubapp.RedactRun: an error may quote what setup, the tests or the model printed); River
// still finds its cancel and snooze errors inside it.
func redactJobError(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
	if err := doInner(ctx); err != nil {
		return redactedError{err}
	}
	return nil
}

type redactedError struct{ err error }

func (e redactedError) Error() string { return githubapp.RedactRun(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
