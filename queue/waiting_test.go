package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

// requirePromoted fails unless run id became queued with a River job of its own, available to
// work it.
func (b *bundle) requirePromoted(t *testing.T, id int64) {
	t.Helper()
	var state string
	var jobID, jobRun int64
	var promoted bool
	err := b.pool.QueryRow(context.Background(), `SELECT r.state, coalesce(r.job_id, 0), r.promoted_at IS NOT NULL,
			coalesce((j.args->>'run_id')::bigint, 0)
		FROM runs r LEFT JOIN river_job j ON j.id = r.job_id WHERE r.id = $1`, id).Scan(&state, &jobID, &promoted, &jobRun)
	if err != nil {
		t.Fatal(err)
	}
	if state != run.StateQueued || jobID == 0 || jobRun != id || !promoted {
		t.Fatalf("run %d: state %s, job %d for run %d, promoted %v; want queued with its own job", id, state, jobID, jobRun, promoted)
	}
	if st := b.jobState(t, jobID); st != rivertype.JobStateAvailable {
		t.Fatalf("the job of promoted run %d is %s", id, st)
	}
}

// activeRun returns the queued or running run of PR 77, 0 when there is none.
func (b *bundle) activeRun(t *testing.T) int64 {
	t.Helper()
	return int64(b.count(t, `SELECT coalesce(max(id), 0) FROM runs WHERE repo_id = 42 AND issue = 77 AND state IN ('queued', 'running')`))
}

// TestWaitingRunIsPromotedWhenTheActiveOneEnds: a request that arrived while the active run was
// unchecked becomes queued with its job in the transaction that ends the active run, whatever
// its end, and then runs; a run that never waited leaves it waiting when it passes its check.
func TestWaitingRunIsPromotedWhenTheActiveOneEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state string
		setup func(b *bundle)
	}{
		{"Refused", run.StateSkipped, func(b *bundle) { b.repo.Perms = map[string]string{"first": "triage"} }},
		{"Succeeded", run.StateSucceeded, func(*bundle) {}},
		{"FailedWithoutAPatch", run.StateFailed, func(b *bundle) {
			b.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
				o := runtest.GoodOutcome()
				o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
				return o, nil
			})
		}},
		{"FailedInTheInfrastructure", run.StateFailed, func(b *bundle) {
			b.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
				return nil, fault.Permanent(errors.New("the sandbox image is missing"))
			})
		}},
		{"PullRequestClosed", run.StateSkipped, func(b *bundle) { b.repo.PR.State = "closed" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tt.setup(b)
			first := b.acceptFollowUp(t, "first", "@frognano rename x")
			next := b.acceptFollowUp(t, "second", "@frognano rename y")
			if !next.Waiting {
				t.Fatalf("the second request: %+v", next)
			}
			b.work(t, first, 1)
			if got := b.row(t, first.RunID).State; got != tt.state {
				t.Fatalf("the first run is %s, want %s", got, tt.state)
			}
			b.requirePromoted(t, next.RunID)
			b.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
				return runtest.GoodOutcome(), nil
			})
			b.repo.PR.State = "open"
			if r := b.work(t, next, 1); !r.completed() || b.row(t, next.RunID).State != run.StateSucceeded {
				t.Fatalf("the promoted run: %v %s", r, b.row(t, next.RunID).State)
			}
			if n := len(b.runner.Specs()); n == 0 || !strings.Contains(b.runner.Specs()[n-1].Task, "rename y") {
				t.Errorf("the promoted request did not reach the model")
			}
		})
	}
}

// TestWaitingRunsFoldIntoThePromotedRun: the requests that waited on one run get one run after
// it, not one each: when the oldest, promoted, passes its check, the others (a CI failure too)
// are counted on it, and its reply says so.
func TestWaitingRunsFoldIntoThePromotedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.Perms = map[string]string{"reader": "read"}
	b.repo.PR.HeadSHA = ciSHA
	reader := b.acceptFollowUp(t, "reader", "@frognano do something")
	w1 := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	w2 := b.acceptFollowUp(t, "other-maintainer", "@frognano rename y") // one person waits once
	ci := b.acceptCI(t, ciSHA)
	for _, res := range []Accepted{w1, w2, ci} {
		if !res.Waiting {
			t.Fatalf("%+v, want waiting", res)
		}
	}
	b.work(t, reader, 1)
	b.requirePromoted(t, w1.RunID)
	if r := b.work(t, w1, 1); !r.completed() || b.row(t, w1.RunID).State != run.StateSucceeded {
		t.Fatalf("%v %s", r, b.row(t, w1.RunID).State)
	}
	for _, id := range []int64{w2.RunID, ci.RunID} {
		if got := b.row(t, id); got.State != run.StateSkipped || got.ExitReason != "folded" {
			t.Errorf("run %d: %+v, want skipped (folded)", id, got)
		}
	}
	if n := b.count(t, `SELECT extra_requests FROM runs WHERE id = $1`, w1.RunID); n != 2 {
		t.Errorf("extra requests %d, want 2", n)
	}
	if last := b.repo.LastEdit(); !strings.Contains(last.Body, "2 more request(s)") {
		t.Errorf("the reply does not count the folded requests:\n%s", last.Body)
	}
	if b.runner.Calls() != 1 || b.activeRun(t) != 0 {
		t.Errorf("%d model runs and active run %d, want 1 and none", b.runner.Calls(), b.activeRun(t))
	}
}

// TestRequestDuringACheckedRunIsCounted: once the active run has passed its check, a request
// is counted on it as before, and nothing waits.
func TestRequestDuringACheckedRunIsCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	var during Accepted
	var duringErr error
	b.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		during, duringErr = b.client.Accept(context.Background(), b.delivery("issue_comment", "created"), RunRequest{
			InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "maintainer",
			Kind: run.KindFollowUp, Request: "@frognano and rename y"})
		return runtest.GoodOutcome(), nil
	})
	if r := b.work(t, first, 1); !r.completed() {
		t.Fatal(r)
	}
	if duringErr != nil || !during.AlreadyActive || during.RunID != first.RunID {
		t.Fatalf("a request during the checked run: %+v, %v", during, duringErr)
	}
	if n := b.count(t, `SELECT count(*) FROM runs`); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if last := b.repo.LastEdit(); !strings.Contains(last.Body, "1 more request(s)") {
		t.Errorf("the reply does not count the request:\n%s", last.Body)
	}
}

// TestReadersFloodMakesBoundedRefusals: many readers' requests on a pull request make at most
// run.MaxWaitingRuns waiting runs; the others are counted on the active run, so the worker refuses
// at most 1 + run.MaxWaitingRuns of them, and says that the rest were not run. (One reader's
// requests make one waiting run: TestOneReaderCannotFillTheWaitingRuns.)
func TestReadersFloodMakesBoundedRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.Perm = "read"
	first := b.acceptFollowUp(t, "reader", "@frognano 0")
	waiting := 0
	for i := 1; i <= 3*run.MaxWaitingRuns; i++ {
		if res := b.acceptFollowUp(t, fmt.Sprintf("reader%d", i), fmt.Sprintf("@frognano %d", i)); res.Waiting {
			waiting++
		} else if !res.AlreadyActive || res.RunID != first.RunID {
			t.Fatalf("request %d: %+v", i, res)
		}
	}
	if waiting != run.MaxWaitingRuns {
		t.Fatalf("%d waiting runs, want %d", waiting, run.MaxWaitingRuns)
	}
	worked := 0
	for id := first.RunID; id != 0 && worked <= 3*run.MaxWaitingRuns; id = b.activeRun(t) {
		b.work(t, Accepted{RunID: id}, 1)
		worked++
	}
	refusals := 0
	for _, c := range b.repo.Comments() {
		if strings.Contains(c, "No run was started") {
			refusals++
		}
	}
	if worked != 1+run.MaxWaitingRuns || refusals != 1+run.MaxWaitingRuns {
		t.Errorf("%d runs worked, %d refusals; want %d", worked, refusals, 1+run.MaxWaitingRuns)
	}
	said := strings.Join(b.repo.Comments(), "\n")
	if !strings.Contains(said, fmt.Sprintf("%d more requests", 2*run.MaxWaitingRuns)) || !strings.Contains(said, "not run") {
		t.Errorf("nothing says the counted requests were not run: %q", b.repo.Comments())
	}
	if b.runner.Calls() != 0 {
		t.Error("a reader's request reached the model")
	}
}

// TestRedeliveryOfAWaitingRequestChangesNothing: the same delivery again, also many at once,
// is a duplicate: no second waiting run, nothing counted.
func TestRedeliveryOfAWaitingRequestChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.acceptFollowUp(t, "reader", "@frognano do something")
	d := b.delivery("issue_comment", "created")
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "maintainer",
		Kind: run.KindFollowUp, Request: "@frognano rename x"}
	res, err := b.client.Accept(context.Background(), d, req)
	if err != nil || !res.Waiting {
		t.Fatalf("%+v, %v", res, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			again, err := b.client.Accept(context.Background(), d, req)
			if err == nil && !again.Duplicate {
				err = fmt.Errorf("a redelivery was not a duplicate: %+v", again)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if runs, waiting, extra := b.count(t, `SELECT count(*) FROM runs`), b.count(t, `SELECT count(*) FROM runs WHERE state = 'waiting'`),
		b.count(t, `SELECT sum(extra_requests) FROM runs`); runs != 2 || waiting != 1 || extra != 0 {
		t.Errorf("%d runs, %d waiting, %d counted; want 2, 1, 0", runs, waiting, extra)
	}
	if n := b.count(t, `SELECT count(*) FROM river_job`); n != 1 {
		t.Errorf("%d jobs, want only the active run's", n)
	}
}

// TestStopAndCancelTakeTheWaitingRuns: a writer's stop cancels the waiting requests with the
// active run and says so; an unlabel or close (Cancel) does too; nothing is promoted.
func TestStopAndCancelTakeTheWaitingRuns(t *testing.T) {
	t.Parallel()
	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.acceptFollowUp(t, "reviewer", "@frognano rename x")
		w := b.acceptFollowUp(t, "reviewer", "@frognano rename y")
		if r := b.workStop(t, "reviewer"); !r.completed() {
			t.Fatal(r)
		}
		for _, id := range []int64{first.RunID, w.RunID} {
			if got := b.row(t, id); got.State != run.StateCancelled || !strings.Contains(got.Error, "stopped by reviewer") {
				t.Errorf("run %d: %+v", id, got)
			}
		}
		want := fmt.Sprintf("frognano stopped run %d, and 1 request that waited for it (run %d)", first.RunID, w.RunID)
		if len(b.repo.Comments()) != 1 || !strings.Contains(b.repo.Comments()[0], want) {
			t.Errorf("reply %q, want it to say %q", b.repo.Comments(), want)
		}
		if n := b.count(t, `SELECT count(*) FROM river_job WHERE state <> 'cancelled'`); n != 0 || b.activeRun(t) != 0 {
			t.Errorf("%d jobs left, active run %d", n, b.activeRun(t))
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.acceptFollowUp(t, "reviewer", "@frognano rename x")
		w := b.acceptFollowUp(t, "reviewer", "@frognano rename y")
		res, err := b.client.Cancel(context.Background(), b.delivery("issues", "closed"), 42, 77, "closed")
		if err != nil || len(res.RunIDs) != 2 {
			t.Fatalf("%+v, %v", res, err)
		}
		for _, id := range []int64{first.RunID, w.RunID} {
			if got := b.row(t, id).State; got != run.StateCancelled {
				t.Errorf("run %d: %s", id, got)
			}
		}
		if b.activeRun(t) != 0 {
			t.Error("a waiting run was promoted by the cancel")
		}
	})
}

// TestStrandedWaitingRunIsPromoted: a waiting run whose active run ended without promoting it
// (ended by an older frognano or by hand) is promoted by the periodic cleanup.
func TestStrandedWaitingRunIsPromoted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.acceptFollowUp(t, "reviewer", "@frognano rename x")
	w := b.acceptFollowUp(t, "reviewer", "@frognano rename y")
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'failed' WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	cw := &cleanupWorker{pool: b.pool, retention: DefaultDeliveryRetention, log: slog.New(slog.DiscardHandler)}
	if r := workJob(t, b, cleanupArgs{}, 1, river.Worker[cleanupArgs](cw)); !r.completed() {
		t.Fatal(r)
	}
	b.requirePromoted(t, w.RunID)
}

// TestRequestWhileTheActiveRunEnds: a request whose transaction waits for the active run's row
// while another transaction ends that run and promotes the waiting one is neither lost nor
// refused: it finds the promoted run, and waits for it in turn.
func TestRequestWhileTheActiveRunEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	first := b.acceptFollowUp(t, "reader", "@frognano do something")
	w := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	// The end, in a transaction of the test's own, holds the active run's row from the start.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid() FROM runs WHERE id = $1 FOR UPDATE`, first.RunID).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	type result struct {
		res Accepted
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := b.client.Accept(ctx, b.delivery("issue_comment", "created"), RunRequest{InstallationID: 5, RepoID: 42,
			Owner: "octo", Repo: "pager", Issue: 77, Labeler: "maintainer", Kind: run.KindFollowUp, Request: "@frognano rename y"})
		done <- result{res, err}
	}()
	// Wait until the request's transaction waits for the row.
	for blocked := 0; blocked == 0; {
		select {
		case r := <-done:
			t.Fatalf("the request did not wait for the active run's row: %+v, %v", r.res, r.err)
		default:
		}
		blocked = b.count(t, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid)
	}
	if _, err := tx.Exec(ctx, `UPDATE runs SET state = 'skipped', finished_at = now() WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := promoteWaiting(ctx, tx, b.client.runs, b.client.River(), 42, 77); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.res.Waiting || r.res.RunID == w.RunID {
		t.Fatalf("the request: %+v, %v; want a waiting run behind the promoted run %d", r.res, r.err, w.RunID)
	}
	b.requirePromoted(t, w.RunID)
}

// TestWritersRequestWaitsBehindAReadersAndRuns: a request on a pull request that has
// an active run used to be counted on that run, not started. A reader's request is such a run
// until the worker refuses it, so a writer's request that came meanwhile was counted on a run
// that never ran, and lost. It now waits as a run of its own while the reader's is unchecked,
// becomes queued (with its job) in the transaction that refuses the reader's, and runs.
func TestWritersRequestWaitsBehindAReadersAndRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.Perms = map[string]string{"reader": "read"}
	res := b.acceptFollowUp(t, "reader", "@frognano do something")
	w := b.acceptFollowUp(t, "maintainer", "@frognano please rename x")
	if !w.Waiting || w.RunID == res.RunID || w.JobID != 0 {
		t.Fatalf("the writer's request: %+v, want a waiting run of its own", w)
	}
	if got := b.row(t, w.RunID).State; got != run.StateWaiting {
		t.Fatalf("the writer's run is %s, want waiting", got)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSkipped {
		t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
	}
	if b.runner.Calls() != 0 {
		t.Error("the reader's request reached the model")
	}
	b.requirePromoted(t, w.RunID)
	if r := b.work(t, w, 1); !r.completed() || b.row(t, w.RunID).State != run.StateSucceeded {
		t.Fatalf("the writer's run: %v %s", r, b.row(t, w.RunID).State)
	}
	if b.runner.Calls() != 1 || !strings.Contains(b.runner.Specs()[0].Task, "please rename x") {
		t.Errorf("the writer's request did not reach the model: %d calls", b.runner.Calls())
	}
	if said := strings.Join(b.repo.Comments(), "\n"); strings.Contains(said, "not run") {
		t.Errorf("a request is said not to have run: %q", b.repo.Comments())
	}
}

// TestReviewCommentsOfTheActiveRunAreNotMoreRequests: the line comments of the review an active
// follow-up answers arrive as requests of their own; they are part of that run, and the line
// comments of a review that waits are part of its waiting run; a request from elsewhere waits
// while the active run is unchecked and is counted once it has passed its check.
func TestReviewCommentsOfTheActiveRunAreNotMoreRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.acceptReview(t, "reviewer")
	again := b.acceptReview(t, "reviewer") // a line comment of review 555
	if !again.AlreadyActive || again.RunID != first.RunID {
		t.Fatalf("second request: %+v", again)
	}
	other := b.acceptFollowUp(t, "reviewer", "@frognano and rename x")
	if !other.Waiting {
		t.Fatalf("third request: %+v", other)
	}
	// A second review (another reviewer's: one person waits once) waits once, however many
	// line comments it has.
	second := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "reviewer2",
		Kind: run.KindFollowUp, Request: "(The review requests changes.)", SourceID: 556}
	var waiting []int64
	for range 3 {
		res, err := b.client.Accept(context.Background(), b.delivery("pull_request_review_comment", "created"), second)
		if err != nil || !res.Waiting {
			t.Fatalf("the second review: %+v, %v", res, err)
		}
		waiting = append(waiting, res.RunID)
	}
	if waiting[0] == other.RunID || waiting[1] != waiting[0] || waiting[2] != waiting[0] {
		t.Errorf("the second review's line comments made runs %v (the other request's is %d)", waiting, other.RunID)
	}
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET checked_at = now() WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	counted := b.acceptFollowUp(t, "reviewer", "@frognano and rename y")
	if !counted.AlreadyActive || counted.RunID != first.RunID {
		t.Fatalf("a request after the check: %+v", counted)
	}
	var extra int
	if err := b.pool.QueryRow(context.Background(), `SELECT extra_requests FROM runs WHERE id = $1`, first.RunID).Scan(&extra); err != nil {
		t.Fatal(err)
	}
	if extra != 1 {
		t.Errorf("extra requests %d, want 1 (only the request after the check)", extra)
	}
}
