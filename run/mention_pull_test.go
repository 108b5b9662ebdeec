package run_test

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestRequestOnAnotherPullRequestAddsACommit: a writer's mention on a pull request that is not
// frognano's, from a branch of this repository, gets a run whose task is the pull request's own
// title and body and the request, cloned from its branch with the environment from its base,
// and a new commit on that branch without force; no issue is named.
func TestRequestOnAnotherPullRequestAddsACommit(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.PR.HeadRef, p.Repo.PR.BaseRef = "feature/pager", "develop"
	p.Repo.PR.Title, p.Repo.PR.Body = "Pager: add a page size", "Adds ?size=N.<!-- hidden note -->"
	id := followUp(t, p, "reviewer", "@frognano please add tests for size 0")
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	p.RequireState(t, id, run.StateSucceeded)
	specs := p.Runner.Specs()
	if len(specs) != 1 {
		t.Fatalf("%d agent runs", len(specs))
	}
	task := specs[0].Task
	for _, want := range []string{"Pager: add a page size", "Adds ?size=N.", "reviewer asks:", "please add tests for size 0"} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
	if strings.Contains(task, "hidden note") || strings.Contains(task, "Pager skips the last page") {
		t.Errorf("task holds hidden text or an issue's:\n%s", task)
	}
	if specs[0].Issue != 0 || specs[0].SetupCommit == "" {
		t.Errorf("spec issue %d, setup commit %q", specs[0].Issue, specs[0].SetupCommit)
	}
	if got := p.Repo.BranchClones(); len(got) != 1 || got[0] != "feature/pager develop" {
		t.Errorf("branch clones %q", got)
	}
	pub := p.Repo.Publishes()
	if len(pub) != 1 || pub[0].Branch != "feature/pager" || !pub[0].FastForward || pub[0].PullRequest != 77 || pub[0].IssueNumber != 0 ||
		!strings.HasPrefix(pub[0].CommitMessage, "Follow-up on #77 at @reviewer's request") {
		t.Fatalf("publishes %+v", pub)
	}
	if strings.Contains(pub[0].Body, "Fixes #") {
		t.Errorf("the body names an issue:\n%s", pub[0].Body)
	}
}
