package queue

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/run"
)

// runWorker is River's side of a run: it works each RunArgs job through the run package's
// Pipeline, and turns what an attempt returns into River's outcomes.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	pool *pgxpool.Pool
	cfg  Config
}

// Timeout overrides River's 1 minute default with the whole-run budget.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return w.cfg.JobTimeout }

// Work performs one attempt of a run (run.Pipeline.Work): ErrBusy (the run is parked) ends
// the job, a run.FinalError cancels it, and any other error is River's to retry (a transient
// failure) or to make available again without spending an attempt (a shutdown); the run, back
// to queued, frees its slot for the next parked run of its installation (parked.go).
func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	log := w.cfg.Logger.With(logging.RunID(job.Args.RunID), logging.JobID(job.ID),
		logging.InstallationID(job.Args.InstallationID), logging.Repo(job.Args.Owner, job.Args.Repo),
		logging.Issue(job.Args.Issue))
	// Whatever the run calls (run, runner, its environment and leaf) logs through this logger.
	ctx = logging.WithLogger(ctx, log)
	// The job's client inserts the job of a run waiting on this run's pull request, and those
	// of the parked runs its end wakes, when this run ends (promoteNext).
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	ctx = context.WithValue(ctx, limitKey{}, w.cfg.PerInstallationLimit)
	// A woken run's job carries the attempts its earlier jobs spent (parked.go).
	err = pipeline(w.pool, w.cfg).Work(ctx, run.Try{RunID: job.Args.RunID, Attempt: job.Attempt + job.Args.Spent,
		MaxAttempts: job.MaxAttempts + job.Args.Spent, Log: log})
	var final *run.FinalError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, run.ErrBusy):
		return nil
	case errors.As(err, &final):
		return river.JobCancel(final.Err)
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, werr := wakeAfter(bg, w.pool, rc, job.Args.InstallationID, w.cfg.PerInstallationLimit); werr != nil {
		log.WarnContext(bg, "waking the parked runs after a run went back to queued; the cleanup will", logging.Err(werr))
	}
	return err
}

// pipeline is the run package's Pipeline for cfg, whose Store promotes waiting runs through
// the River client of the job at hand (promoteNext).
func pipeline(pool *pgxpool.Pool, cfg Config) *run.Pipeline {
	return run.NewPipeline(run.Config{
		GitHub: cfg.GitHub, Runner: cfg.Runner, Store: store(pool).WithBudgets(cfg.Budgets).WithPublished(published(cfg.Outcomes)),
		JobTimeout: cfg.JobTimeout, PerInstallationLimit: cfg.PerInstallationLimit, StatusEditInterval: cfg.StatusEditInterval,
		WorkDir: cfg.WorkDir, Label: cfg.Label, CIFollowUps: cfg.CIFollowUps, PublicURL: cfg.PublicURL, Ceilings: cfg.Ceilings,
		RemoteCancel: rivertype.ErrJobCancelledRemotely, EndStep: cfg.endStep,
	})
}

// published is the runs' Store's Published hook: what a run published, recorded by outcomes
// in the transaction that ends the run (nil outcomes: no hook).
func published(outcomes *outcome.Store) run.Published {
	if outcomes == nil {
		return nil
	}
	return func(ctx context.Context, tx pgx.Tx, p run.Publication) error {
		return outcomes.Published(ctx, tx, outcome.Publication(p))
	}
}

// store is the runs' Store whose ends promote the next waiting run (promoteNext) and queue
// the writing of their outbox (deliverOutbox). It is also how this package writes the runs in
// its own transactions (its methods that take a pgx.Tx): the Store is the runs' only writer.
func store(pool *pgxpool.Pool) *run.Store {
	return run.NewStore(pool, promoteNext).WithDeliver(deliverOutbox)
}

// promoteNext is the run.Promote of a job's context: it promotes the run waiting on the
// ended run's pull request and wakes the parked runs of its installation (parked.go), through
// runs, inserting their jobs with the River client that works the job (River puts it in the
// context) under the limit the context carries (without one it wakes nothing; the cleanup
// does).
func promoteNext(ctx context.Context, tx pgx.Tx, runs *run.Store, ended run.Ended) (int64, error) {
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		rc = nil // promoteWaiting says so, if a run was waiting
	}
	return promoteAndWake(ctx, tx, runs, rc, limitFrom(ctx), ended)
}
