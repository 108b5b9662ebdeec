package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

// killed is what a worker the test kills at step panics with: River's executor takes it as
// the attempt's end, and nothing of the attempt runs after it (no deferred function of the run
// writes to GitHub), so that from then on the worker writes nothing, as a killed process.
func killed(step string) string { return "worker killed at step " + step }

// endScenario is one way a run can end, and what GitHub must show once it has.
type endScenario struct {
	name    string
	outcome func() *run.Outcome
	state   string
	// refuse, when set, makes GitHub refuse the run before it has a status comment (the
	// reaction that comes first): the end must post the comment, not edit it.
	refuse func(g *ghBundle)
	// check checks the issue's visible state on the fake GitHub once everything is written.
	check func(t *testing.T, g *ghBundle, id int64)
}

var endScenarios = []endScenario{
	{name: "Succeeded", outcome: runtest.GoodOutcome, state: run.StateSucceeded,
		check: func(t *testing.T, g *ghBundle, id int64) {
			prs := g.gh.PRs(g.hub)
			if len(prs) != 1 || !prs[0].Draft || prs[0].Head != "frognano/issue-7" {
				t.Fatalf("PRs = %+v, want one draft on frognano/issue-7", prs)
			}
			body := g.onlyComment(t).Body
			if !strings.Contains(body, fmt.Sprintf("✅ frognano run %d opened a draft pull request: #%d (%s).", id, prs[0].Number, prs[0].HTMLURL)) {
				t.Errorf("the status comment does not link the PR:\n%s", body)
			}
			if labels := g.gh.Labels(g.hub, 7); !slices.Contains(labels, "frognano") {
				t.Errorf("labels = %v: a run that succeeded keeps its label", labels)
			}
		}},
	{name: "Failed", outcome: func() *run.Outcome {
		o := runtest.GoodOutcome()
		o.Patch, o.NoPatch = nil, runner.NoPatchUnchanged
		return o
	}, state: run.StateFailed,
		check: func(t *testing.T, g *ghBundle, id int64) {
			if prs := g.gh.PRs(g.hub); len(prs) != 0 {
				t.Errorf("PRs = %+v, want none", prs)
			}
			body := g.onlyComment(t).Body
			if !strings.Contains(body, fmt.Sprintf("❌ frognano run %d ended without a pull request.", id)) ||
				!strings.Contains(body, "without changing any file") {
				t.Errorf("the status comment does not say the run failed and why:\n%s", body)
			}
			if labels := g.gh.Labels(g.hub, 7); slices.Contains(labels, "frognano") {
				t.Errorf("labels = %v: a failed run's label is removed, so that adding it again retries", labels)
			}
		}},
	{name: "RefusedBeforeItsComment", outcome: runtest.GoodOutcome, state: run.StateFailed,
		refuse: func(g *ghBundle) {
			g.gh.RespondNext("POST", "/repos/*/*/issues/*/reactions", http.StatusForbidden,
				`{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`, 1)
		},
		check: func(t *testing.T, g *ghBundle, id int64) {
			if prs := g.gh.PRs(g.hub); len(prs) != 0 {
				t.Errorf("PRs = %+v, want none", prs)
			}
			// One comment, posted by whichever writer came first, never a second.
			body := g.onlyComment(t).Body
			if !strings.HasPrefix(body, fmt.Sprintf("<!-- frognano:run:%d -->", id)) ||
				!strings.Contains(body, fmt.Sprintf("❌ frognano run %d ended without a pull request.", id)) ||
				!strings.Contains(body, "lacks the permission this request needs") {
				t.Errorf("the comment does not say the run failed and why:\n%s", body)
			}
			if got := g.row(t, id).CommentID; got != g.onlyComment(t).ID {
				t.Errorf("the run records comment %d, GitHub has %d", got, g.onlyComment(t).ID)
			}
			if labels := g.gh.Labels(g.hub, 7); slices.Contains(labels, "frognano") {
				t.Errorf("labels = %v: a failed run's label is removed, so that adding it again retries", labels)
			}
		}},
}

// TestKilledWorkerLeavesItsEndToRiver is River's side of run's TestRunEndSurvivesAKillAtEveryStep
// (which kills a run at every step of its end): a worker killed during an attempt is an
// attempt River sees die, retries while the job has attempts left, and otherwise discards; the
// status job the end queued in its transaction writes the outbox; and a run killed on its
// last attempt before its end was recorded is ended by the cleanup, whose status job says so.
func TestKilledWorkerLeavesItsEndToRiver(t *testing.T) {
	t.Parallel()
	scenario := map[string]endScenario{}
	for _, sc := range endScenarios {
		scenario[sc.name] = sc
	}
	for _, tt := range []struct {
		scenario, step string
		last           bool
	}{
		{"Failed", run.StepRecorded, false},               // River retries; the retry and the status job write the end
		{"RefusedBeforeItsComment", run.StepPosted, true}, // no retry: the status job alone
		{"Succeeded", run.StepPublished, false},           // before the record: the retry ends the run
		{"Succeeded", run.StepPublished, true},            // River discards the job: the cleanup ends the run
	} {
		name := tt.scenario + "_KilledAt_" + tt.step
		if tt.last {
			name += "_OnTheLastAttempt"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			killAt(t, scenario[tt.scenario], tt.step, tt.last)
		})
	}
}

// killAt works scenario sc's run with a worker killed at step (on the job's last attempt when
// last), then what comes next, and checks what GitHub shows.
func killAt(t *testing.T, sc endScenario, step string, last bool) {
	g := setupGitHub(t)
	g.runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) { return sc.outcome(), nil })
	if sc.refuse != nil {
		sc.refuse(g)
	}
	g.worker.cfg.endStep = func(_ context.Context, _ int64, s string) {
		if s == step {
			panic(killed(step))
		}
	}
	res := g.acceptIssue(t)
	attempt := 1
	if last {
		attempt = MaxAttempts
	}
	r := g.work(t, res, attempt)
	if r.kind != river.EventKindJobFailed || !strings.Contains(r.String(), killed(step)) {
		t.Fatalf("the killed attempt = %v, want River to see it die", r)
	}
	recorded := step != run.StepPublishing && step != run.StepPublished
	if got := g.row(t, res.RunID).State; recorded && got != sc.state || !recorded && got != run.StateRunning {
		t.Fatalf("after the kill the run is %s", got)
	}

	if step == run.StepRecorded {
		// The window the outbox closes: the outcome is recorded, GitHub does not show it yet.
		if sc.refuse != nil {
			if cs := g.gh.Comments(g.hub, 7); len(cs) != 0 {
				t.Fatalf("killed before any write, the issue already has comments %+v", cs)
			}
		} else if body := g.onlyComment(t).Body; !strings.Contains(body, "is working on this issue") {
			t.Fatalf("killed before any write, the comment already says:\n%s", body)
		}
	}

	// What comes next: a restarted worker with no kill in it.
	g.worker.cfg.endStep = nil
	statusJobs := g.statusJobs(t, res.RunID)
	switch {
	case !last:
		if !r.retried() {
			t.Fatalf("the killed attempt = %v, want River to retry the job", r)
		}
		if r := g.work(t, res, attempt+1); !r.completed() {
			t.Fatalf("the retry: %v", r)
		}
	case recorded:
		if r.retried() {
			t.Fatalf("the killed last attempt = %v, want no retry", r)
		}
	default:
		// Killed on its last attempt before the outcome was recorded: River discards the job,
		// and no worker will take the run again. The periodic cleanup ends it, once the job
		// has been over for a while, with an outbox that says so.
		g.abandoned(t, res, r)
		return
	}
	// The status job the end queued in its transaction comes next too (or alone).
	if recorded && len(statusJobs) != 1 {
		t.Fatalf("status jobs %v, want the one the end queued", statusJobs)
	}
	if !recorded {
		statusJobs = g.statusJobs(t, res.RunID) // the retry's end queued it
	}
	for _, args := range statusJobs {
		if r := workJob(t, g.bundle, args, 1, river.Worker[statusArgs](&statusWorker{pool: g.pool, gh: g.worker.cfg.GitHub, log: g.worker.cfg.Logger})); !r.completed() {
			t.Fatalf("the status job: %v", r)
		}
	}

	if got := g.row(t, res.RunID).State; got != sc.state {
		t.Errorf("the run is %s, want %s", got, sc.state)
	}
	sc.check(t, g, res.RunID)
	if n := g.count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL`, res.RunID); n != 0 {
		t.Error("the run's outbox is still there")
	}
}

// statusJobs are the arguments of the status jobs queued for run id.
func (g *ghBundle) statusJobs(t *testing.T, id int64) []statusArgs {
	t.Helper()
	rows, err := g.pool.Query(context.Background(), `SELECT args FROM river_job WHERE kind = $1 AND (args->>'run_id')::bigint = $2 ORDER BY id`,
		statusArgs{}.Kind(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []statusArgs
	for rows.Next() {
		var raw []byte
		var a statusArgs
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunEndOutlivesItsStatusJob: GitHub fails the final edit of the status comment for the
// worker that ended the run and for every try of the status job its end queued, which River then
// discards. The outbox stays in the run's row; the periodic cleanup queues a new status job,
// which writes it.
func TestRunEndOutlivesItsStatusJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := 0; i < 1+MaxAttempts; i++ {
		b.repo.FailNext("EditComment", runtest.Flaky("editing the comment"))
	}
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("the run: %v", r)
	}
	if got := b.row(t, res.RunID).State; got != run.StateSucceeded {
		t.Fatalf("the run is %s", got)
	}
	if len(b.repo.Edits()) != 0 {
		t.Fatalf("edits %+v while GitHub fails them", b.repo.Edits())
	}
	g := &ghBundle{bundle: b}
	jobs := g.statusJobs(t, res.RunID)
	if len(jobs) != 1 || !jobs[0].Outbox {
		t.Fatalf("status jobs %+v, want the outbox's", jobs)
	}
	status := river.Worker[statusArgs](&statusWorker{pool: b.pool, gh: runtest.GitHubOf(b.repo), log: b.worker.cfg.Logger})
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		r := workJob(t, b, jobs[0], attempt, status)
		if attempt < MaxAttempts && !r.retried() || attempt == MaxAttempts && r.job.State != rivertype.JobStateDiscarded {
			t.Fatalf("status job attempt %d: %v", attempt, r)
		}
	}
	// River discarded it (the attempts above ran copies): so does the queued one; and the
	// cleanup's time has come.
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE kind = $1`, statusArgs{}.Kind()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET finished_at = finished_at - interval '1 hour' WHERE id = $1`, res.RunID); err != nil {
		t.Fatal(err)
	}
	cleanup := river.Worker[cleanupArgs](&cleanupWorker{pool: b.pool, retention: MinDeliveryRetention, log: b.worker.cfg.Logger})
	if r := workJob(t, b, cleanupArgs{}, 1, cleanup); !r.completed() {
		t.Fatalf("the cleanup: %v", r)
	}
	var fresh statusArgs
	for _, a := range g.statusJobs(t, res.RunID) {
		fresh = a
	}
	if n := b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'available'`, statusArgs{}.Kind()); n != 1 || !fresh.Outbox {
		t.Fatalf("%d status jobs available after the cleanup (last %+v), want one for the outbox", n, fresh)
	}
	if r := workJob(t, b, fresh, 1, status); !r.completed() {
		t.Fatalf("the new status job: %v", r)
	}
	last := b.repo.LastEdit()
	if last.ID != b.row(t, res.RunID).CommentID || !strings.Contains(last.Body, "opened a draft pull request: #77 (https://github.example/o/r/pull/77)") {
		t.Errorf("final edit = %+v, want the status comment linking the PR", last)
	}
	if n := b.count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL`, res.RunID); n != 0 {
		t.Error("the run's outbox is still there")
	}
	// A cleanup after it finds nothing left to write.
	if _, err := b.pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE kind = $1`, statusArgs{}.Kind()); err != nil {
		t.Fatal(err)
	}
	if r := workJob(t, b, cleanupArgs{}, 1, cleanup); !r.completed() {
		t.Fatalf("the second cleanup: %v", r)
	}
	if n := b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'available'`, statusArgs{}.Kind()); n != 0 {
		t.Errorf("%d status jobs queued by a cleanup after the outbox was written", n)
	}
}

// abandoned takes over a run whose worker was killed on its job's last attempt before the
// run's outcome was recorded (r is that attempt): River discards the job (the attempt worked a
// copy of it), the periodic cleanup ends the run once the job has been over for longer than
// the grace, and the status job it queued makes GitHub say so: the status comment says that
// frognano stopped working on it and how to retry, and the label is off (adding it again
// retries). A cleanup within the grace, and one after the end, change nothing.
func (g *ghBundle) abandoned(t *testing.T, res Accepted, r attemptResult) {
	t.Helper()
	ctx := context.Background()
	if r.job.State != rivertype.JobStateDiscarded {
		t.Fatalf("the killed last attempt = %v, want River to discard the job", r)
	}
	if got := g.row(t, res.RunID).State; got != run.StateRunning {
		t.Fatalf("the run is %s before the cleanup", got)
	}
	if _, err := g.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, res.JobID); err != nil {
		t.Fatal(err)
	}
	cleanup := river.Worker[cleanupArgs](&cleanupWorker{pool: g.pool, retention: MinDeliveryRetention, log: g.worker.cfg.Logger,
		label: g.worker.cfg.Label, publicURL: g.worker.cfg.PublicURL})
	if r := workJob(t, g.bundle, cleanupArgs{}, 1, cleanup); !r.completed() {
		t.Fatalf("the cleanup: %v", r)
	}
	if got := g.row(t, res.RunID).State; got != run.StateRunning {
		t.Fatalf("the cleanup ended the run %s within the grace after its job's end", got)
	}
	if _, err := g.pool.Exec(ctx, `UPDATE river_job SET finalized_at = now() - interval '1 hour' WHERE id = $1`, res.JobID); err != nil {
		t.Fatal(err)
	}
	if r := workJob(t, g.bundle, cleanupArgs{}, 1, cleanup); !r.completed() {
		t.Fatalf("the cleanup: %v", r)
	}
	if got := g.row(t, res.RunID); got.State != run.StateFailed || !strings.Contains(got.Error, "job") {
		t.Fatalf("after the cleanup the run is %+v, want failed saying its job ended", got)
	}
	jobs := g.statusJobs(t, res.RunID)
	if len(jobs) != 1 || !jobs[0].Outbox {
		t.Fatalf("status jobs %+v, want the outbox's", jobs)
	}
	status := river.Worker[statusArgs](&statusWorker{pool: g.pool, gh: g.worker.cfg.GitHub, log: g.worker.cfg.Logger})
	if r := workJob(t, g.bundle, jobs[0], 1, status); !r.completed() {
		t.Fatalf("the status job: %v", r)
	}
	body := g.onlyComment(t).Body
	for _, want := range []string{fmt.Sprintf("❌ frognano stopped working on run %d before it finished.", res.RunID),
		"died on its last try", "Add the label again to retry."} {
		if !strings.Contains(body, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, body)
		}
	}
	if labels := g.gh.Labels(g.hub, 7); slices.Contains(labels, "frognano") {
		t.Errorf("labels = %v: the label of a run frognano gave up is removed, so that adding it again retries", labels)
	}
	if n := g.count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL`, res.RunID); n != 0 {
		t.Error("the run's outbox is still there")
	}
	if r := workJob(t, g.bundle, cleanupArgs{}, 1, cleanup); !r.completed() || len(g.statusJobs(t, res.RunID)) != 1 {
		t.Errorf("a cleanup after the end: %v, status jobs %+v", r, g.statusJobs(t, res.RunID))
	}
}
