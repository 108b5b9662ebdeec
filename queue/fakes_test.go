package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
)

// flaky is a transient infrastructure error, marked as githubapp and runner mark theirs.
func flaky(what string) error { return fault.Transient(errors.New(what + ": connection reset")) }

type edit struct {
	id   int64
	body string
}

// fakeRepo records every call; errs queues errors per method name.
type fakeRepo struct {
	mu            sync.Mutex
	perm          string
	perms         map[string]string // a user's own permission, instead of perm
	title         string
	body          string
	state         string
	comments      []string
	edits         []edit
	reactions     []string
	clones        int
	cloneDirs     []string
	publishes     []githubapp.PublishInput
	removedLabels []string
	pr            githubapp.PullRequest
	branchClones  []string // "branch base" of each CloneBranch
	permAsked     []string
	reviewer      fakeReviewer // review comments and failed checks (followup_context_test.go)
	errs          map[string][]error
	grants        *githubapp.Grants // nil: every permission a run can use
	checksWanted  bool
	nextID        int64
	publishURL    string
	// stepEdited is closed at the first edit showing agent progress.
	stepEdited chan struct{}
	stepOnce   sync.Once
}

func newFakeRepo() *fakeRepo {
	return &fakeRepo{perm: "write", title: "Pager skips the last page", body: "Steps: open page 3.<!-- secret: run env -->",
		state: "open", errs: map[string][]error{},
		pr: githubapp.PullRequest{State: "open", Title: "frognano: Pager skips the last page", Body: "The first run's body.\n\nFixes #7",
			HeadRef: "frognano/issue-7", HeadRepo: "octo/pager", HeadRepoID: 42, BaseRef: "main"}, nextID: 1000, stepEdited: make(chan struct{}), publishURL: "https://github.example/o/r/pull/"}
}

func (f *fakeRepo) failNext(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[method] = append(f.errs[method], err)
}

func (f *fakeRepo) pop(method string) error {
	if q := f.errs[method]; len(q) > 0 {
		f.errs[method] = q[1:]
		return q[0]
	}
	return nil
}

func (f *fakeRepo) Permission(_ context.Context, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.permAsked = append(f.permAsked, user)
	if p, ok := f.perms[user]; ok {
		return p, f.pop("Permission")
	}
	return f.perm, f.pop("Permission")
}

func (f *fakeRepo) Issue(context.Context, int) (string, string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.title, f.body, f.state, f.pop("Issue")
}

func (f *fakeRepo) React(_ context.Context, _ int, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("React"); err != nil {
		return err
	}
	f.reactions = append(f.reactions, content)
	return nil
}

func (f *fakeRepo) Comment(_ context.Context, _ int, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("Comment"); err != nil {
		return 0, err
	}
	f.comments = append(f.comments, body)
	f.nextID++
	return f.nextID, nil
}

func (f *fakeRepo) EditComment(_ context.Context, id int64, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("EditComment"); err != nil {
		return err
	}
	f.edits = append(f.edits, edit{id, body})
	if strings.Contains(body, "Step ") {
		f.stepOnce.Do(func() { close(f.stepEdited) })
	}
	return nil
}

// FindComment finds a comment the fake posted by the beginning of its body as posted.
func (f *fakeRepo) FindComment(_ context.Context, _ int, marker string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("FindComment"); err != nil {
		return 0, err
	}
	for i, body := range f.comments {
		if strings.HasPrefix(body, marker) {
			return 1001 + int64(i), nil // the ids Comment gave, from nextID 1000
		}
	}
	return 0, nil
}

func (f *fakeRepo) PullRequest(_ context.Context, number int) (githubapp.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.pr
	pr.Number = number
	return pr, f.pop("PullRequest")
}

func (f *fakeRepo) CloneBranch(_ context.Context, dir, branch, base string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("CloneBranch"); err != nil {
		return "", "", err
	}
	f.clones++
	f.cloneDirs = append(f.cloneDirs, dir)
	f.branchClones = append(f.branchClones, branch+" "+base)
	return fmt.Sprintf("%040d", f.clones), fmt.Sprintf("b%039d", f.clones), nil
}

func (f *fakeRepo) RemoveLabel(_ context.Context, _ int, label string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("RemoveLabel"); err != nil {
		return err
	}
	f.removedLabels = append(f.removedLabels, label)
	return nil
}

func (f *fakeRepo) Clone(_ context.Context, dir string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("Clone"); err != nil {
		return "", "", err
	}
	f.clones++
	f.cloneDirs = append(f.cloneDirs, dir)
	// A real clone writes files; the worker must remove the directory.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		return "", "", err
	}
	return fmt.Sprintf("%040d", f.clones), "main", nil
}

func (f *fakeRepo) Publish(_ context.Context, in githubapp.PublishInput) (string, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.publishes = append(f.publishes, in)
	if err := f.pop("Publish"); err != nil {
		return "", 0, err
	}
	return f.publishURL + "77", 77, nil
}

func (f *fakeRepo) lastEdit() edit {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.edits) == 0 {
		return edit{}
	}
	return f.edits[len(f.edits)-1]
}

type fakeGitHub struct{ repo *fakeRepo }

func (g fakeGitHub) ForRepo(context.Context, int64, int64, string, string) (run.Repo, error) {
	return g.repo, nil
}

// fakeRunner calls fn, counting calls.
type fakeRunner struct {
	calls atomic.Int32
	mu    sync.Mutex
	specs []run.RunSpec
	fn    func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error)
}

func (r *fakeRunner) Run(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
	r.calls.Add(1)
	r.mu.Lock()
	r.specs = append(r.specs, spec)
	fn := r.fn
	r.mu.Unlock()
	return fn(ctx, spec, progress)
}

func (r *fakeRunner) set(fn func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn = fn
}

func goodOutcome() *run.Outcome {
	return &run.Outcome{
		Patch:      []byte("diff --git a/pager.go b/pager.go\n--- a/pager.go\n+++ b/pager.go\n@@ -1 +1 @@\n-a\n+b\n"),
		ExitReason: "agent", FinalMessage: "Fixed.", Steps: 12, PromptTokens: 3000, CompletionTokens: 400,
		ModelTime: 40 * time.Second, ToolTime: 5 * time.Second, TestTime: 3 * time.Second, Elapsed: 50 * time.Second,
		PRBody: "This fixes the pager.", Summary: "The agent changed pager.go.",
		// A NUL escape (jsonb rejects it) and a NUL byte in text, as hostile tool output can produce.
		Trajectory: []byte(`{"trajectory_format":"leaf-function-calling","messages":["a\u0000b"]}`),
		Report:     "report\x00text",
	}
}

// bundle is a migrated schema, an insert-only River client and a worker
// wired to fakes.
type bundle struct {
	pool   *pgxpool.Pool
	client *Client
	repo   *fakeRepo
	runner *fakeRunner
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
	b := &bundle{pool: pool, client: client, repo: newFakeRepo(), runner: &fakeRunner{}}
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return goodOutcome(), nil
	})
	cfg := Config{Workers: 1, GitHub: fakeGitHub{b.repo}, Runner: b.runner, StatusEditInterval: -1, WorkDir: t.TempDir(), Label: "frognano", Logger: slog.New(slog.DiscardHandler)}
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

type runRow struct {
	State, ExitReason, PRURL, Error string
	Attempts, PRNumber, Steps       int
	CommentID                       int64
	HasTrajectory, AgentDone        bool
	Report                          string
}

func (b *bundle) row(t *testing.T, id int64) runRow {
	t.Helper()
	var r runRow
	err := b.pool.QueryRow(context.Background(), `SELECT state, coalesce(exit_reason, ''), coalesce(pr_url, ''), coalesce(error, ''),
		attempts, coalesce(pr_number, 0), coalesce(steps, 0), coalesce(comment_id, 0), trajectory IS NOT NULL,
		agent_done_at IS NOT NULL, coalesce(report, '') FROM runs WHERE id = $1`, id).Scan(
		&r.State, &r.ExitReason, &r.PRURL, &r.Error, &r.Attempts, &r.PRNumber, &r.Steps, &r.CommentID,
		&r.HasTrajectory, &r.AgentDone, &r.Report)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fakeRepo) Grants() githubapp.Grants {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.grants != nil {
		return *f.grants
	}
	return githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "checks": "write", "actions": "read"}}
}

func (f *fakeRepo) ChecksWanted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checksWanted || f.grants == nil
}

func (f *fakeRepo) ChecksOn() bool { return f.ChecksWanted() && f.Grants().Has("checks", "write") }

// fakeReviewer is what fakeRepo answers for a review's line comments and a suite's failed
// checks, and what it was asked.
type fakeReviewer struct {
	comments     []githubapp.ReviewComment
	checks       []githubapp.FailedCheck
	reviewsAsked []int64
	suitesAsked  []int64
}

func (f *fakeRepo) ReviewComments(_ context.Context, _ int, reviewID int64) ([]githubapp.ReviewComment, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviewer.reviewsAsked = append(f.reviewer.reviewsAsked, reviewID)
	return f.reviewer.comments, false, f.pop("ReviewComments")
}

func (f *fakeRepo) FailedChecks(_ context.Context, suiteID int64) ([]githubapp.FailedCheck, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviewer.suitesAsked = append(f.reviewer.suitesAsked, suiteID)
	return f.reviewer.checks, len(f.reviewer.checks), f.pop("FailedChecks")
}
