package run_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// auditRun is a ghRun whose App records every write of a run in the audit trail, as the
// service's does, and whose fake GitHub has a second repository in the same installation.
type auditRun struct {
	*ghRun
	other *githubtest.Repo
}

func setupAudited(t *testing.T) *auditRun {
	t.Helper()
	g := ghRunOf(runtest.NewWithGitHub(t, runtest.GitHubOptions{Audit: true, ChecksWrite: true}))
	other := g.gh.AddRepo("octo", "other", map[string]string{"pager.go": "a\n"})
	g.gh.AddInstallation(5, other)
	g.gh.SetPermission(other, "maintainer", "write")
	for _, n := range []int{8, 9} {
		g.gh.AddIssue(g.hub, n, fmt.Sprintf("Pager bug %d", n), "Steps.")
		g.gh.AddLabel(g.hub, n, "frognano")
	}
	g.gh.AddIssue(other, 1, "Other bug", "Steps.")
	g.gh.AddLabel(other, 1, "frognano")
	return &auditRun{ghRun: g, other: other}
}

// label records the label of issue n of repo and works the run's first attempt.
func (a *auditRun) label(t *testing.T, repo *githubtest.Repo, n int) (int64, runtest.Attempt) {
	t.Helper()
	id := a.Request(t, runtest.Request{Issue: n, RepoID: repo.ID, Repo: repo.Name})
	return id, a.Work(t, id, 1)
}

var resetsIn = regexp.MustCompile(`\d{4}-\d\d-\d\d 00:00 UTC \(in [0-9hms]+\)`)

// TestBudgetRunsPerRepository is issue 22's "done when": with a budget of 2 runs a day for a
// repository, the third label gets one comment (which budget, when it resets) and no run, its
// label taken off; a run of another repository of the same installation is unaffected.
func TestBudgetRunsPerRepository(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	a.Store.WithBudgets(run.Budgets{RepoRuns: 2})
	for _, n := range []int{7, 8} {
		id, r := a.label(t, a.hub, n)
		if row := a.Row(t, id); !r.Completed() || row.State != run.StateSucceeded {
			t.Fatalf("run on issue %d: %v, %+v; want it to succeed within the budget", n, r, row)
		}
	}
	calls := a.Runner.Calls()
	id, r := a.label(t, a.hub, 9)
	row := a.Row(t, id)
	if !r.Completed() || row.State != run.StateSkipped || row.ExitReason != run.ExitBudget {
		t.Fatalf("third run: %v, %+v; want skipped for the budget", r, row)
	}
	if a.Runner.Calls() != calls {
		t.Error("the agent ran for the run past the budget")
	}
	comments := a.gh.Comments(a.hub, 9)
	if len(comments) != 1 {
		t.Fatalf("%d comments on the third issue, want one: %+v", len(comments), comments)
	}
	body := resetsIn.ReplaceAllString(a.GitHub.Normalize(comments[0].Body), "DAY 00:00 UTC (in TIME)")
	golden.Check(t, "queue-budget-repository-runs.md", body)
	for _, w := range []string{"budget of 2 runs a day", "FROGNANO_BUDGET_REPOSITORY_RUNS_PER_DAY", "resets at"} {
		if !strings.Contains(body, w) {
			t.Errorf("the comment lacks %q:\n%s", w, body)
		}
	}
	if rx := a.gh.Reactions(a.hub, 9); len(rx) != 0 {
		t.Errorf("reactions %+v on an issue whose run did not start", rx)
	}
	if labels := a.gh.Labels(a.hub, 9); len(labels) != 0 {
		t.Errorf("labels %v: the label is taken off, so that labelling again after the reset retries", labels)
	}
	// Working the job again (a redelivery, a retry) posts nothing more.
	if r := a.Work(t, id, 2); !r.Completed() || len(a.gh.Comments(a.hub, 9)) != 1 {
		t.Errorf("a second attempt at the skipped run: %v, %d comments", r, len(a.gh.Comments(a.hub, 9)))
	}
	// Labelling again is a new run, held to the same budget: no way around it.
	res2, _ := a.label(t, a.hub, 9)
	if row := a.Row(t, res2); row.ExitReason != run.ExitBudget {
		t.Errorf("relabelled run %+v, want it skipped for the budget too", row)
	}
	// Another repository of the installation has a budget of its own.
	res3, r3 := a.label(t, a.other, 1)
	if row := a.Row(t, res3); !r3.Completed() || row.State != run.StateSucceeded {
		t.Errorf("the other repository's run: %v, %+v; want it to succeed", r3, row)
	}
	if len(a.gh.PRs(a.other)) != 1 || len(a.gh.PRs(a.hub)) != 2 {
		t.Errorf("pull requests: %d on the other repository, %d on the first; want 1 and 2", len(a.gh.PRs(a.other)), len(a.gh.PRs(a.hub)))
	}
	// The budget's comments and label removals are their runs' writes too (issue 28).
	runtest.RequireEveryWriteAudited(t, a.gh, a.Pool)
}

// TestBudgetOverrideWithoutRestart: the operator's override (the budgets table, `frognano
// budget set`) applies to the next run's check of the same worker, without a restart; so does
// a token budget, counted over the runs started today.
func TestBudgetOverrideWithoutRestart(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	settings := run.Budgets{InstallationRuns: 1}
	p.Store.WithBudgets(settings)
	st := run.NewStore(p.Pool, nil)
	ctx := context.Background()
	first := p.Label(t, 1)
	if r := p.Work(t, first, 1); p.Row(t, first).State != run.StateSucceeded {
		t.Fatalf("first run: %v", r)
	}
	second := p.Label(t, 2)
	p.Work(t, second, 1)
	if row := p.Row(t, second); row.ExitReason != run.ExitBudget || !strings.Contains(row.Error, "installation's budget of 1 runs") {
		t.Fatalf("second run %+v, want it over the installation's budget of 1", row)
	}
	three := int64(3)
	if err := st.SetBudget(ctx, 5, run.BudgetOverride{InstallationRuns: &three}); err != nil {
		t.Fatal(err)
	}
	third := p.Label(t, 3)
	p.Work(t, third, 1)
	if row := p.Row(t, third); row.State != run.StateSucceeded {
		t.Fatalf("third run %+v, want it to run under the override of 3", row)
	}
	// runtest.GoodOutcome used 3,400 tokens in each of the two runs started today.
	limit := int64(6800)
	if err := st.SetBudget(ctx, 5, run.BudgetOverride{InstallationTokens: &limit}); err != nil {
		t.Fatal(err)
	}
	fourth := p.Label(t, 4)
	p.Work(t, fourth, 1)
	if row := p.Row(t, fourth); row.ExitReason != run.ExitBudget || !strings.Contains(row.Error, "6800 tokens") || !strings.Contains(row.Error, "(6800 today;") {
		t.Fatalf("fourth run %+v, want it over the token budget set for the installation", row)
	}
	if posted := len(p.Repo.Comments()); posted != 4 { // the status comments of the two runs, and one for each run past a budget
		t.Errorf("%d comments posted, want 4", posted)
	}
	if err := st.ClearBudget(ctx, 5); err != nil {
		t.Fatal(err)
	}
	got, over, err := st.Budget(ctx, 5, settings)
	if err != nil || over != nil || got.InstallationRuns != 1 {
		t.Fatalf("budgets after clear: %+v %+v %v; want the settings' again", got, over, err)
	}
}

// TestBudgetAcrossWorkers: eight runs of one repository worked at once, each attempt through
// its own run.Pipeline on the shared database (as workers of several processes make them),
// under a budget of 3 runs a day: exactly 3 start.
func TestBudgetAcrossWorkers(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.PerInstallationLimit = 20
	p.Store.WithBudgets(run.Budgets{RepoRuns: 3})
	var ids []int64
	for n := 1; n <= 8; n++ {
		ids = append(ids, p.Label(t, n))
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Work(t, id, 1)
		}()
	}
	wg.Wait()
	if n := p.Count(t, `SELECT count(*) FROM runs WHERE state = 'succeeded'`); n != 3 {
		t.Errorf("%d runs succeeded, want the budget's 3", n)
	}
	if n := p.Count(t, `SELECT count(*) FROM runs WHERE state = 'skipped' AND exit_reason = 'budget'`); n != 5 {
		t.Errorf("%d runs skipped for the budget, want 5", n)
	}
	if n := p.Runner.Calls(); n != 3 {
		t.Errorf("the agent ran %d times, want 3", n)
	}
}

// TestBudgetCommentPostedOnceAcrossALostAnswer: GitHub makes the budget's comment but its
// answer is lost (a proxy timed out): the outbox stays, and the writer that comes next finds
// the comment by its marker instead of posting a second one.
func TestBudgetCommentPostedOnceAcrossALostAnswer(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	a.Store.WithBudgets(run.Budgets{RepoRuns: 1})
	if _, r := a.label(t, a.hub, 7); !r.Completed() {
		t.Fatalf("first run: %v", r)
	}
	a.gh.LoseNextResponse("POST", "/repos/octo/pager/issues/8/comments", 502, 1)
	id, r := a.label(t, a.hub, 8)
	if row := a.Row(t, id); !r.Completed() || row.ExitReason != run.ExitBudget {
		t.Fatalf("run past the budget: %v %+v", r, row)
	}
	if n := a.Count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NOT NULL AND (outbox->>'post')::bool`, id); n != 1 {
		t.Fatal("the outbox of the lost post is not left for the next writer")
	}
	wrote, err := a.WriteOutbox(t, id)
	if err != nil || !wrote {
		t.Fatalf("WriteOutbox: %v %v", wrote, err)
	}
	comments := a.gh.Comments(a.hub, 8)
	if len(comments) != 1 {
		t.Fatalf("%d comments, want the one GitHub made: %+v", len(comments), comments)
	}
	if row := a.Row(t, id); row.CommentID != comments[0].ID {
		t.Errorf("run's comment %d, GitHub's %d", row.CommentID, comments[0].ID)
	}
	if n := a.Count(t, `SELECT count(*) FROM runs WHERE id = $1 AND outbox IS NULL`, id); n != 1 {
		t.Error("the outbox is left")
	}
	if labels := a.gh.Labels(a.hub, 8); len(labels) != 0 {
		t.Errorf("labels %v after the outbox was written", labels)
	}
	if n := a.gh.CountRequests("POST", "/repos/octo/pager/issues/8/comments"); n != 1 {
		t.Errorf("%d posts of the comment, want 1", n)
	}
}
