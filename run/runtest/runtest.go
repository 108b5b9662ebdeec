package runtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
)

// MaxAttempts is how many attempts the queue makes at a run (queue.MaxAttempts; the queue's
// tests check that the two agree): an attempt numbered MaxAttempts is the last.
const MaxAttempts = 3

// DefaultJobTimeout is the queue's default whole-run budget (queue.DefaultJobTimeout), which
// Work enforces as River does.
const DefaultJobTimeout = 90 * time.Minute

// Repository is the repository of New's runs: installation 5, id 42, octo/pager.
const (
	Installation int64 = 5
	RepoID       int64 = 42
	Owner              = "octo"
	RepoName           = "pager"
	Label              = "frognano"
)

// Pipeline is a run.Pipeline on a schema of its own, with what it was asked to do on its
// behalf recorded.
type Pipeline struct {
	Pool *pgxpool.Pool
	// Repo is the fake repository every run of New works on; nil with NewWithGitHub.
	Repo *Repo
	// GitHub is the fake GitHub server of NewWithGitHub; nil with New.
	GitHub *FakeGitHub
	Runner *Runner
	// Store is Config.Store: a run.Store whose ends record the promotion and the outbox job
	// the queue would make (Promoted, Delivered). WithBudgets on it sets the budgets.
	Store *run.Store
	// Config is what every Work, WriteOutbox and RewriteStatus builds its run.Pipeline from; a
	// test changes it before the attempt it is for. RemoteCancel is ErrRemoteCancel.
	Config run.Config
	Log    *slog.Logger

	mu            sync.Mutex
	promoted      []run.Ended
	delivered     map[int64]int
	published     []run.Publication
	failPublished []error
	seq           atomic.Int64
	repoID        int64
}

// ErrRemoteCancel is the cause a test cancels an attempt's context with to say that the
// queue cancelled the run's job while it worked (River's rivertype.ErrJobCancelledRemotely).
var ErrRemoteCancel = errors.New("runtest: the run's job was cancelled remotely")

// New returns a Pipeline on a fresh migrated schema whose runs work on the fake Repo with the
// scripted Runner: the queue's defaults (PerInstallationLimit 2, the label frognano, a job
// budget of DefaultJobTimeout), no throttling of the status comment's edits, no budgets, no
// public URL. The schema is dropped when t ends.
func New(t testing.TB) *Pipeline {
	t.Helper()
	p := newPipeline(t)
	p.Repo = NewRepo()
	p.Config.GitHub = GitHubOf(p.Repo)
	return p
}

func newPipeline(t testing.TB) *Pipeline {
	t.Helper()
	p := &Pipeline{Pool: dbtest.New(t), Runner: NewRunner(), Log: slog.New(slog.DiscardHandler), delivered: map[int64]int{}, repoID: RepoID}
	p.Store = run.NewStore(p.Pool, p.promote).WithDeliver(p.deliver).WithPublished(p.publish)
	p.Config = run.Config{Runner: p.Runner, Store: p.Store, JobTimeout: DefaultJobTimeout, PerInstallationLimit: 2,
		StatusEditInterval: -1, WorkDir: t.TempDir(), Label: Label, RemoteCancel: ErrRemoteCancel}
	return p
}

// promote is the Store's Promote: the queue's promotes the run waiting on the pull request and
// wakes parked runs (queue/waiting.go, queue/parked.go); this one records that it was asked.
func (p *Pipeline) promote(_ context.Context, _ pgx.Tx, _ *run.Store, ended run.Ended) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.promoted = append(p.promoted, ended)
	return 0, nil
}

// deliver is the Store's Deliver: the queue's inserts the status job that writes the outbox
// (queue/outbox.go); this one counts it, for WriteOutbox to stand in for that job.
func (p *Pipeline) deliver(_ context.Context, _ pgx.Tx, runID int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delivered[runID]++
	return nil
}

// publish is the Store's Published hook: the queue's records the pull request in
// pull_outcomes (package outcome); this one records what it was handed, or fails as
// FailPublished asked.
func (p *Pipeline) publish(_ context.Context, _ pgx.Tx, pub run.Publication) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.failPublished) > 0 {
		err := p.failPublished[0]
		p.failPublished = p.failPublished[1:]
		return err
	}
	p.published = append(p.published, pub)
	return nil
}

// FailPublished makes the next call of the Published hook fail with err (calls queue up): the
// transaction that would end the run rolls back.
func (p *Pipeline) FailPublished(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failPublished = append(p.failPublished, err)
}

// Published are what the ends of succeeded runs handed to the Published hook, in order.
func (p *Pipeline) Published() []run.Publication {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]run.Publication(nil), p.published...)
}

// Promoted are the runs whose ends asked to promote the run waiting behind them (Promote), in
// order: every end of an active run asks.
func (p *Pipeline) Promoted() []run.Ended {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]run.Ended(nil), p.promoted...)
}

// Delivered is how many times an end of run id (or Cancel) queued the writing of its outbox:
// the status jobs the queue would have.
func (p *Pipeline) Delivered(id int64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delivered[id]
}

// Request is a request for a run, as the queue's intake records one (queue.RunRequest). Zero
// fields take New's repository, the labeller "maintainer" and KindIssue.
type Request struct {
	InstallationID, RepoID int64
	Owner, Repo            string
	Issue                  int
	Labeler                string
	Kind                   string
	Request, RequestURL    string
	CISHA                  string
	SourceID               int64
	// Trigger and TokenID are how the run was asked for ("": by its kind) and the API token
	// that asked (0: none).
	Trigger string
	TokenID int64
	// Options are the options asked at trigger (run.NewRun's Asked).
	Options run.Options
	// TriggerLabel is the label whose event asked for the run (run.NewRun's TriggerLabel).
	TriggerLabel string
	// State is run.StateQueued ("" too) or run.StateWaiting: a request the intake made wait
	// for its pull request's active run (queue/waiting.go).
	State string
	// Promoted: the run waited and the queue promoted it (queued) when the active run ended:
	// once it passes its check, the runs still waiting are counted on it. Request it before the
	// runs that wait behind it.
	Promoted bool
}

// Request records req as a queued run (or a waiting one: State), through the Store's methods
// the queue's intake calls (run.Store.Queue, AddWaiting, PromoteWaiting), and returns the run's
// id. A second request while one is active is the intake's to decide (counted, or waiting:
// queue/waiting.go), not a run's: the test fails.
func (p *Pipeline) Request(t testing.TB, req Request) int64 {
	t.Helper()
	if req.Issue <= 0 {
		t.Fatalf("runtest: a request names its issue or pull request (got %d)", req.Issue)
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if req.InstallationID == 0 {
		req.InstallationID = Installation
	}
	if req.RepoID == 0 {
		req.RepoID = p.repoID
	}
	def(&req.Owner, Owner)
	def(&req.Repo, RepoName)
	def(&req.Labeler, "maintainer")
	def(&req.State, run.StateQueued)
	n := run.NewRun{HookTarget: "runtest", DeliveryID: fmt.Sprintf("request-%d", p.seq.Add(1)),
		InstallationID: req.InstallationID, RepoID: req.RepoID, Owner: req.Owner, Repo: req.Repo, Issue: req.Issue,
		Labeler: req.Labeler, Kind: req.Kind, Request: req.Request, RequestURL: req.RequestURL, CISHA: req.CISHA, SourceID: req.SourceID,
		Trigger: req.Trigger, TokenID: req.TokenID, Asked: req.Options, TriggerLabel: req.TriggerLabel}
	ctx := context.Background()
	var id int64
	err := pgx.BeginFunc(ctx, p.Pool, func(tx pgx.Tx) error {
		var err error
		switch {
		case req.State == run.StateQueued && !req.Promoted:
			id, err = p.Store.Queue(ctx, tx, n)
			if err == nil && id == 0 {
				t.Fatalf("runtest: #%d of repository %d already has a queued or running run; what a second request becomes is the queue's intake's (queue.Client.Accept)",
					req.Issue, req.RepoID)
			}
		case req.State == run.StateWaiting && !req.Promoted:
			id, err = p.Store.AddWaiting(ctx, tx, n)
		case req.State == run.StateQueued:
			if id, err = p.Store.AddWaiting(ctx, tx, n); err != nil {
				return err
			}
			var promoted run.Ref
			if promoted, err = p.Store.PromoteWaiting(ctx, tx, req.RepoID, req.Issue); err == nil && promoted.ID != id {
				t.Fatalf("runtest: run %d waits before the one to promote on #%d: request the promoted run first", promoted.ID, req.Issue)
			}
		default:
			t.Fatalf("runtest: a request is queued or waiting, not %s", req.State)
		}
		return err
	})
	if err != nil {
		t.Fatalf("runtest: recording the request %+v: %v", req, err)
	}
	return id
}

// Label records the label of issue n of the repository by "maintainer" (Request).
func (p *Pipeline) Label(t testing.TB, n int) int64 {
	t.Helper()
	return p.Request(t, Request{Issue: n})
}

// Attempt is how one attempt at a run ended, as the queue sees it.
type Attempt struct {
	RunID  int64
	Number int // from 1
	// Err is what Pipeline.Work returned.
	Err error
	// Killed is what the attempt panicked with (a test kills a worker at a step by panicking
	// in Config.EndStep or in the Runner): nothing of the attempt ran after it.
	Killed any
}

// Completed: the attempt ended the run or found nothing to do (the queue completes the job).
func (a Attempt) Completed() bool { return a.Killed == nil && a.Err == nil }

// Busy: the run was parked for its installation (ErrBusy; the queue completes the job).
func (a Attempt) Busy() bool { return a.Killed == nil && errors.Is(a.Err, run.ErrBusy) }

// Final: the run must not be tried again (a *run.FinalError; the queue cancels the job).
func (a Attempt) Final() bool {
	var f *run.FinalError
	return a.Killed == nil && errors.As(a.Err, &f)
}

// Retried: any other error, which the queue retries while attempts are left.
func (a Attempt) Retried() bool { return a.Killed == nil && a.Err != nil && !a.Busy() && !a.Final() }

func (a Attempt) String() string {
	what := "completed"
	switch {
	case a.Killed != nil:
		what = fmt.Sprintf("killed (%v)", a.Killed)
	case a.Busy():
		what = "busy: parked for its installation"
	case a.Final():
		what = fmt.Sprintf("final, not to be retried (%v)", a.Err)
	case a.Retried():
		what = fmt.Sprintf("to be retried (%v)", a.Err)
	}
	return fmt.Sprintf("attempt %d of run %d: %s", a.Number, a.RunID, what)
}

// Work makes attempt number attempt (from 1; MaxAttempts is the last) at run id through
// run.Pipeline.Work, as the queue's worker does: the context carries the run's logger and
// ends at Config.JobTimeout. A panic in the attempt is its end (Attempt.Killed).
func (p *Pipeline) Work(t testing.TB, id int64, attempt int) Attempt {
	t.Helper()
	return p.WorkContext(context.Background(), t, id, attempt)
}

// WorkContext is Work under ctx: a test ends ctx with context.CancelCauseFunc and
// ErrRemoteCancel to cancel the run's job while it works, or with context.Canceled to stop
// the worker.
func (p *Pipeline) WorkContext(ctx context.Context, t testing.TB, id int64, attempt int) (a Attempt) {
	t.Helper()
	a = Attempt{RunID: id, Number: attempt}
	ctx = logging.WithLogger(ctx, p.Log)
	if p.Config.JobTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Config.JobTimeout)
		defer cancel()
	}
	defer func() {
		if v := recover(); v != nil {
			a.Killed = v
		}
	}()
	a.Err = run.NewPipeline(p.Config).Work(ctx, run.Try{RunID: id, Attempt: attempt, MaxAttempts: MaxAttempts, Log: p.Log})
	return a
}

// WriteOutbox writes what the end of run id left for GitHub (run.Pipeline.WriteOutbox), as
// the queue's status job does.
func (p *Pipeline) WriteOutbox(t testing.TB, id int64) (bool, error) {
	t.Helper()
	return run.NewPipeline(p.Config).WriteOutbox(context.Background(), id, p.Log)
}

// Cancel cancels run id, as the queue's Cancel does on an unlabel or a close: in one
// transaction the active and waiting runs of its issue or pull request become cancelled with
// reason (run.Store.CancelActive, CancelWaiting) and, when one has a status comment, its outbox
// says so (run.Store.RecordCancelled) and its writing is queued (Delivered). It reports
// whether run id was active.
func (p *Pipeline) Cancel(t testing.TB, id int64, reason string) bool {
	t.Helper()
	ctx := context.Background()
	cancelled := false
	err := pgx.BeginFunc(ctx, p.Pool, func(tx pgx.Tx) error {
		cancelled = false
		var c run.Cancellation
		if err := tx.QueryRow(ctx, `SELECT repo_id, issue FROM runs WHERE id = $1`, id).Scan(&c.RepoID, &c.Issue); err != nil {
			return err
		}
		c.Reason = reason
		active, err := p.Store.CancelActive(ctx, tx, c)
		if err != nil {
			return err
		}
		for _, a := range active {
			cancelled = cancelled || a.ID == id
			if a.Comment == 0 {
				continue
			}
			recorded, err := p.Store.RecordCancelled(ctx, tx, a.ID, p.Config.PublicURL)
			if err != nil {
				return err
			}
			if recorded {
				p.mu.Lock()
				p.delivered[a.ID]++
				p.mu.Unlock()
			}
		}
		_, err = p.Store.CancelWaiting(ctx, tx, c)
		return err
	})
	if err != nil {
		t.Fatalf("runtest: cancelling run %d: %v", id, err)
	}
	return cancelled
}

// Row is a run's row as the tests read it.
type Row struct {
	State, ExitReason, PRURL, Error string
	Attempts, PRNumber, Steps       int
	CommentID                       int64
	HasTrajectory, AgentDone        bool
	Report                          string
	Parked                          bool
}

// Row reads run id's row.
func (p *Pipeline) Row(t testing.TB, id int64) Row {
	t.Helper()
	return ReadRow(t, p.Pool, id)
}

// ReadRow reads run id's row in pool.
func ReadRow(t testing.TB, pool *pgxpool.Pool, id int64) Row {
	t.Helper()
	var r Row
	err := pool.QueryRow(context.Background(), `SELECT state, coalesce(exit_reason, ''), coalesce(pr_url, ''), coalesce(error, ''),
		attempts, coalesce(pr_number, 0), coalesce(steps, 0), coalesce(comment_id, 0), trajectory IS NOT NULL,
		agent_done_at IS NOT NULL, coalesce(report, ''), parked_at IS NOT NULL FROM runs WHERE id = $1`, id).Scan(
		&r.State, &r.ExitReason, &r.PRURL, &r.Error, &r.Attempts, &r.PRNumber, &r.Steps, &r.CommentID,
		&r.HasTrajectory, &r.AgentDone, &r.Report, &r.Parked)
	if err != nil {
		t.Fatalf("runtest: reading run %d: %v", id, err)
	}
	return r
}

// RequireState fails t unless run id is in state; the message gives the run's row.
func (p *Pipeline) RequireState(t testing.TB, id int64, state string) Row {
	t.Helper()
	r := p.Row(t, id)
	if r.State != state {
		t.Fatalf("run %d is %s (exit reason %q, error %q, %d attempts), want %s", id, r.State, r.ExitReason, r.Error, r.Attempts, state)
	}
	return r
}

// Count runs a query that counts (SELECT count(*) ...) on the pipeline's schema.
func (p *Pipeline) Count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := p.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("runtest: counting %q: %v", sql, err)
	}
	return n
}

// RequireOutboxWritten fails t when run id's outbox is still there: its end is not all on
// GitHub yet.
func (p *Pipeline) RequireOutboxWritten(t testing.TB, id int64) {
	t.Helper()
	if p.Count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL`, id) != 0 {
		t.Errorf("run %d's outbox is still there, want it written and cleared", id)
	}
}
