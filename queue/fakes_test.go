package queue

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run/runtest"
)

// bundle is a migrated schema, an insert-only River client and a worker wired to run/runtest's
// fakes (a Repo for every repository, the scripted Runner).
type bundle struct {
	pool   *pgxpool.Pool
	client *Client
	repo   *runtest.Repo
	runner *runtest.Runner
	worker *runWorker
	seq    atomic.Int64
}

func setup(t testing.TB) *bundle {
	t.Helper()
	pool := dbtest.New(t)
	client, err := NewClient(pool, Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{pool: pool, client: client, repo: runtest.NewRepo(), runner: runtest.NewRunner()}
	cfg := Config{Workers: 1, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner, StatusEditInterval: -1, WorkDir: t.TempDir(), Label: "frognano", Logger: slog.New(slog.DiscardHandler)}
	b.worker = &runWorker{pool: pool, cfg: cfg.withDefaults()}
	return b
}

func (b *bundle) delivery(event, action string) Delivery {
	return Delivery{HookTarget: "integration:1", ID: fmt.Sprintf("guid-%d", b.seq.Add(1)), Event: event, Action: action, InstallationID: 5}
}

func request(issue int) RunRequest {
	return RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: issue, Labeler: "maintainer"}
}

func (b *bundle) accept(t *testing.T, issue int) Accepted {
	t.Helper()
	res, err := b.client.Accept(context.Background(), b.delivery("issues", "labeled"), request(issue))
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == 0 || res.JobID == 0 {
		t.Fatalf("Accept = %+v, want a run and a job", res)
	}
	return res
}

// attemptResult is how River settled one attempt of a job.
type attemptResult struct {
	kind river.EventKind   // completed, cancelled, snoozed, or failed (retryable or discarded)
	job  *rivertype.JobRow // the job row after the attempt
	err  error             // the error River retries on; nil after success, JobCancel or JobSnooze
}

func (r attemptResult) completed() bool { return r.kind == river.EventKindJobCompleted }
func (r attemptResult) cancelled() bool { return r.kind == river.EventKindJobCancelled }
func (r attemptResult) snoozed() bool   { return r.kind == river.EventKindJobSnoozed }

// retried: River keeps the job for another attempt (available at once when the retry is due
// within the scheduler's interval, else retryable).
func (r attemptResult) retried() bool {
	return r.kind == river.EventKindJobFailed &&
		(r.job.State == rivertype.JobStateRetryable || r.job.State == rivertype.JobStateAvailable)
}

func (r attemptResult) String() string {
	last := ""
	if n := len(r.job.Errors); n > 0 {
		last = r.job.Errors[n-1].Error
	}
	return fmt.Sprintf("%s (job %s, error %q)", r.kind, r.job.State, last)
}

// work runs attempt number attempt of the accepted run the way River works a job in production
// (rivertest runs River's own job-running code), so the worker's Timeout, its JobCancel and
// JobSnooze and River's retry decision all act as in production. The job is a copy of the one Accept inserted (same arguments),
// inserted and worked in a transaction of the test's own that is rolled back afterwards:
// Accept's job stays available and is never worked (the bundle's client only inserts), and a
// Cancel during the attempt cancels Accept's job without waiting on a lock the test holds.
func (b *bundle) work(t *testing.T, res Accepted, attempt int) attemptResult {
	t.Helper()
	args := RunArgs{RunID: res.RunID, InstallationID: 5, Owner: "octo", Repo: "pager", Issue: 7}
	return workJob(t, b, args, attempt, river.Worker[RunArgs](b.worker))
}

// workJob inserts a job with args in a transaction of the test's own, rolled back afterwards,
// and works its attempt number attempt with worker through River's own job-running code
// (rivertest), as River would in production.
func workJob[T river.JobArgs](t *testing.T, b *bundle, args T, attempt int, worker river.Worker[T]) attemptResult {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ins, err := b.client.River().InsertTx(ctx, tx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := ins.Job
	job.Attempt = attempt - 1 // River counts this attempt when it starts it
	// The client's middleware that every job's context gets in production: the limit its ends
	// wake parked runs under.
	w := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{Logger: slog.New(slog.DiscardHandler),
		Middleware: []rivertype.Middleware{withLimit(b.worker.cfg.PerInstallationLimit)}}, worker)
	out, err := w.WorkJob(ctx, t, tx, job)
	if out == nil {
		t.Fatalf("working attempt %d of a %s job: %v", attempt, args.Kind(), err)
	}
	return attemptResult{kind: out.EventKind, job: out.Job, err: err}
}

// row reads run id's row.
func (b *bundle) row(t *testing.T, id int64) runtest.Row {
	t.Helper()
	return runtest.ReadRow(t, b.pool, id)
}
