package run_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

// killed is what a worker the test kills at step panics with: runtest's Work (as River's
// executor) takes it as the attempt's end, and nothing of the attempt runs after it (no deferred
// function of the run writes to GitHub), so that from then on the worker writes nothing, as a
// killed process.
func killed(step string) string { return "worker killed at step " + step }

// endScenario is one way a run can end, and what GitHub must show once it has.
type endScenario struct {
	name    string
	outcome func() *run.Outcome
	state   string
	// refuse, when set, makes GitHub refuse the run before it has a status comment (the
	// reaction that comes first): the end must post the comment, not edit it.
	refuse func(g *ghRun)
	// check checks the visible state on the fake GitHub once everything is written.
	check func(t *testing.T, g *ghRun, id int64)
}

var endScenarios = []endScenario{
	{name: "Succeeded", outcome: runtest.GoodOutcome, state: run.StateSucceeded,
		check: func(t *testing.T, g *ghRun, id int64) {
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
		check: func(t *testing.T, g *ghRun, id int64) {
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
		refuse: func(g *ghRun) {
			g.gh.RespondNext("POST", "/repos/*/*/issues/*/reactions", http.StatusForbidden,
				`{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`, 1)
		},
		check: func(t *testing.T, g *ghRun, id int64) {
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
			if got := g.Row(t, id).CommentID; got != g.onlyComment(t).ID {
				t.Errorf("the run records comment %d, GitHub has %d", got, g.onlyComment(t).ID)
			}
			if labels := g.gh.Labels(g.hub, 7); slices.Contains(labels, "frognano") {
				t.Errorf("labels = %v: a failed run's label is removed, so that adding it again retries", labels)
			}
		}},
}

// onlyComment is the one comment: the status comment.
func (g *ghRun) onlyComment(t *testing.T) githubtest.Comment {
	t.Helper()
	return g.GitHub.OnlyComment(t, 7)
}

// endSteps works one clean run of scenario sc and returns the steps its end passed, in order.
func endSteps(t *testing.T, sc endScenario) []string {
	t.Helper()
	g := setupGitHub(t)
	g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) { return sc.outcome(), nil })
	if sc.refuse != nil {
		sc.refuse(g)
	}
	var mu sync.Mutex
	var steps []string
	g.Config.EndStep = func(_ context.Context, _ int64, step string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, step)
	}
	id := g.Label(t, 7)
	if r := g.Work(t, id, 1); !r.Completed() && !(sc.refuse != nil && r.Final()) {
		t.Fatalf("a clean run: %v", r)
	}
	sc.check(t, g, id)
	return steps
}

// TestRunEndSurvivesAKillAtEveryStep kills the worker at each step of a run's end, from before
// the publish to the outbox cleared (the steps a clean run passes, not chosen ones), and lets
// whatever comes next in production take over: the run's next attempt (a restarted worker
// takes its job back), then the writing of the outbox the end queued (Deliver: the queue's
// status job, Pipeline.WriteOutbox); or, when the kill was on the job's last attempt (the
// queue retries it no more), that writing alone; or, killed on the last attempt before the
// outcome was recorded, the end of an abandoned run (Store.EndAbandoned, which the queue's
// cleanup calls). Every time, GitHub ends showing the recorded outcome: the status comment
// finished (with its PR link), the label as the outcome asks, one PR at most, and nothing left
// to write. (The queue's tests prove River's side: its retry of a killed attempt, the status
// job, the cleanup.)
func TestRunEndSurvivesAKillAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, sc := range endScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			steps := endSteps(t, sc)
			want := []string{run.StepRecorded, run.StepCommented, run.StepUnlabelled, run.StepWritten}
			if sc.refuse != nil {
				want = []string{run.StepRecorded, run.StepPosted, run.StepCommented, run.StepUnlabelled, run.StepWritten}
			}
			if sc.state == run.StateSucceeded {
				want = []string{run.StepPublishing, run.StepPublished, run.StepRecorded, run.StepCommented, run.StepWritten}
			}
			if !slices.Equal(steps, want) {
				t.Fatalf("a clean run's end passed %v, want %v", steps, want)
			}
			for _, step := range steps {
				for _, last := range []bool{false, true} {
					name := "KilledAt_" + step
					if last {
						name += "_OnTheLastAttempt"
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						killAt(t, sc, step, last)
					})
				}
			}
		})
	}
}

// killAt works scenario sc's run with a worker killed at step (on the job's last attempt when
// last), then what comes next, and checks what GitHub shows.
func killAt(t *testing.T, sc endScenario, step string, last bool) {
	g := setupGitHub(t)
	g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) { return sc.outcome(), nil })
	if sc.refuse != nil {
		sc.refuse(g)
	}
	g.Config.EndStep = func(_ context.Context, _ int64, s string) {
		if s == step {
			panic(killed(step))
		}
	}
	id := g.Label(t, 7)
	attempt := 1
	if last {
		attempt = runtest.MaxAttempts
	}
	r := g.Work(t, id, attempt)
	if r.Killed != killed(step) {
		t.Fatalf("the killed attempt = %v, want it killed at %s", r, step)
	}
	recorded := step != run.StepPublishing && step != run.StepPublished
	if got := g.Row(t, id).State; recorded && got != sc.state || !recorded && got != run.StateRunning {
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
	g.Config.EndStep = nil
	queued := g.Delivered(id)
	switch {
	case !last:
		if r := g.Work(t, id, attempt+1); !r.Completed() {
			t.Fatalf("the retry: %v", r)
		}
	case recorded:
	default:
		// Killed on its last attempt before the outcome was recorded: no worker will take the
		// run again. The queue's cleanup ends it, once its job has been over for a while, with
		// an outbox that says so.
		g.abandoned(t, id)
		return
	}
	// The writing of the outbox the end queued in its transaction comes next too (or alone).
	if recorded && queued != 1 {
		t.Fatalf("%d writings of the outbox queued, want the one the end queued", queued)
	}
	if !recorded {
		queued = g.Delivered(id) // the retry's end queued it
	}
	for range queued {
		if _, err := g.WriteOutbox(t, id); err != nil {
			t.Fatalf("writing the outbox: %v", err)
		}
	}

	if got := g.Row(t, id).State; got != sc.state {
		t.Errorf("the run is %s, want %s", got, sc.state)
	}
	sc.check(t, g, id)
	g.RequireOutboxWritten(t, id)
}

// abandoned takes over a run whose worker was killed on its job's last attempt before the
// run's outcome was recorded: the queue's cleanup ends it (Store.EndAbandoned, once the job
// has been over for longer than the grace: the queue's tests prove when), and the writing of
// the outbox it queued makes GitHub say so: the status comment says that frognano stopped
// working on it and how to retry, and the label is off (adding it again retries). Ending it
// again changes nothing.
func (g *ghRun) abandoned(t *testing.T, id int64) {
	t.Helper()
	ctx := context.Background()
	if got := g.Row(t, id).State; got != run.StateRunning {
		t.Fatalf("the run is %s before the cleanup", got)
	}
	if ended, err := g.Store.EndAbandoned(ctx, id, "true", g.Config.Label, g.Config.PublicURL); err != nil || !ended {
		t.Fatalf("EndAbandoned: %v %v", ended, err)
	}
	if got := g.Row(t, id); got.State != run.StateFailed || !strings.Contains(got.Error, "job") {
		t.Fatalf("after the cleanup the run is %+v, want failed saying its job ended", got)
	}
	if n := g.Delivered(id); n != 1 {
		t.Fatalf("%d writings of the outbox queued, want the end's", n)
	}
	if _, err := g.WriteOutbox(t, id); err != nil {
		t.Fatalf("writing the outbox: %v", err)
	}
	body := g.onlyComment(t).Body
	for _, want := range []string{fmt.Sprintf("❌ frognano stopped working on run %d before it finished.", id),
		"died on its last try", "Add the label again to retry."} {
		if !strings.Contains(body, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, body)
		}
	}
	if labels := g.gh.Labels(g.hub, 7); slices.Contains(labels, "frognano") {
		t.Errorf("labels = %v: the label of a run frognano gave up is removed, so that adding it again retries", labels)
	}
	g.RequireOutboxWritten(t, id)
	if ended, err := g.Store.EndAbandoned(ctx, id, "true", g.Config.Label, g.Config.PublicURL); err != nil || ended || g.Delivered(id) != 1 {
		t.Errorf("ending it again: %v %v, %d writings queued", ended, err, g.Delivered(id))
	}
}

// TestRefusalCommentIsPostedOnce: GitHub refuses a run before it has a status comment, takes
// the post of the refusal's comment but loses its answer (502), and a person has copied the
// run's hidden marker into a comment of theirs. The worker that ended the run cannot know
// whether its post was taken; the status job that comes next finds the App's comment by its
// marker (not the person's) and edits it: one comment of the App's, never a second, and the
// person's left alone.
func TestRefusalCommentIsPostedOnce(t *testing.T) {
	t.Parallel()
	g := setupGitHub(t)
	var refused endScenario
	for _, sc := range endScenarios {
		if sc.refuse != nil {
			refused = sc
		}
	}
	refused.refuse(g)
	id := g.Label(t, 7)
	forged := fmt.Sprintf("<!-- frognano:run:%d -->\nI am not frognano.", id)
	mine := g.gh.AddComment(g.hub, 7, "mallory", forged)
	g.gh.LoseNextResponse("POST", "/repos/*/*/issues/*/comments", http.StatusBadGateway, 1)
	if r := g.Work(t, id, 1); !r.Final() {
		t.Fatalf("the refused run: %v", r)
	}
	if n := g.Count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL`, id); n != 1 {
		t.Fatal("the outbox is gone though the worker could not know whether its post was taken")
	}
	if n := g.Delivered(id); n != 1 {
		t.Fatalf("%d writings of the outbox queued, want the end's", n)
	}
	if _, err := g.WriteOutbox(t, id); err != nil {
		t.Fatalf("writing the outbox: %v", err)
	}
	var app []githubtest.Comment
	for _, c := range g.gh.Comments(g.hub, 7) {
		switch {
		case c.ID == mine && c.Body != forged:
			t.Errorf("the person's comment was edited:\n%s", c.Body)
		case c.ID != mine:
			app = append(app, c)
		}
	}
	if len(app) != 1 || !strings.Contains(app[0].Body, "lacks the permission this request needs") || len(app[0].History) != 1 {
		t.Fatalf("the App's comments %+v, want one, posted and then edited by the status job", app)
	}
	if got := g.Row(t, id).CommentID; got != app[0].ID {
		t.Errorf("the run records comment %d, want %d", got, app[0].ID)
	}
	g.RequireOutboxWritten(t, id)
}
