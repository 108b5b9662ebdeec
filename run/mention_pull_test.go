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

// TestRequestOnAPullRequestWithOptions: a mention's attempts= reaches the agent of a pull
// request's run as an issue's does; a refused option (base=, which a pull request's run cannot
// take) is answered once the requester is known to be a writer, with one comment that says why,
// and nothing runs.
func TestRequestOnAPullRequestWithOptions(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.PR.HeadRef, p.Repo.PR.BaseRef = "feature/pager", "develop"
	id := followUpWith(t, p, runtest.Request{Labeler: "reviewer", Request: "@frognano please add tests for size 0",
		Options: run.Options{Attempts: 2}})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	p.RequireState(t, id, run.StateSucceeded)
	if specs := p.Runner.Specs(); len(specs) != 1 || specs[0].Attempts != 2 {
		t.Fatalf("agent runs %+v, want one with 2 attempts", specs)
	}

	q := runtest.New(t)
	q.Repo.PR.HeadRef, q.Repo.PR.BaseRef = "feature/pager", "develop"
	refused, rest := run.ParsePullRequestOptions("base=main add tests")
	if refused.Refused == nil || rest != "add tests" {
		t.Fatalf("ParsePullRequestOptions(base=main ...) = %+v, %q", refused, rest)
	}
	id = followUpWith(t, q, runtest.Request{Labeler: "reviewer", Request: "@frognano base=main add tests", Options: refused})
	if r := q.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	q.RequireState(t, id, run.StateSkipped)
	if n := len(q.Runner.Specs()); n != 0 {
		t.Errorf("%d agent runs for a refused option", n)
	}
	cs := q.Repo.Comments()
	if len(cs) != 1 || !strings.Contains(cs[0], "@reviewer, frognano did not start: the option `base` cannot be asked on a pull request") {
		t.Errorf("comments %q, want one refusal of base", cs)
	}
	if got := q.Repo.PermissionAsked(); len(got) != 1 || got[0] != "reviewer" {
		t.Errorf("permission asked of %q: the refusal must come after the requester's check", got)
	}
}
