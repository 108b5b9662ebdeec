package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// openPR works the label of issue 7 to its draft pull request on the fake GitHub and returns
// the pull request's number.
func (g *ghRun) openPR(t *testing.T) int {
	t.Helper()
	id := g.Label(t, 7)
	if r := g.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	prs := g.gh.PRs(g.hub)
	if len(prs) != 1 || prs[0].State != "open" {
		t.Fatalf("pull requests %+v, want frognano's", prs)
	}
	return prs[0].Number
}

// acceptFollowUp is maintainer's request on pull request pr, as the queue's intake records it.
func (g *ghRun) acceptFollowUp(t *testing.T, pr int) int64 {
	t.Helper()
	return g.Request(t, runtest.Request{Issue: pr, Labeler: "maintainer", Kind: run.KindFollowUp,
		Request: "@frognano please handle page 0 too", RequestURL: "https://github.example/octo/pager/pull/8#issuecomment-9"})
}

// reply is the follow-up's one reply on pull request pr, normalized, checked against golden
// file queue-refused-NAME.md.
func (g *ghRun) reply(t *testing.T, pr int, name string) string {
	t.Helper()
	comments := g.gh.Comments(g.hub, pr)
	if len(comments) != 1 {
		t.Fatalf("%d comments on the pull request, want the one reply: %+v", len(comments), comments)
	}
	body := g.GitHub.Normalize(comments[0].Body)
	golden.Check(t, "queue-refused-"+name+".md", body)
	return body
}

// Case 4 (continued): a follow-up's pull request was closed, or its branch deleted by a person
// (which closes the pull request on GitHub), before the run, between reading the pull request
// and cloning its branch, or while the agent worked. Each ends with the reply saying which,
// nothing pushed (no branch made again), and no retry.
func TestFollowUpRefused(t *testing.T) {
	t.Parallel()
	const branch = "frognano/issue-7"
	t.Run("PRClosedWhileItWorks", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		pr := g.openPR(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			g.gh.ClosePR(g.hub, pr)
			return runtest.GoodOutcome(), nil
		})
		id := g.acceptFollowUp(t, pr)
		if r := g.Work(t, id, 1); !r.Completed() {
			t.Fatal(r)
		}
		if row := g.Row(t, id); row.State != run.StateSkipped {
			t.Errorf("run %+v, want skipped", row)
		}
		body := g.reply(t, pr, "followup-pr-closed")
		if !strings.Contains(body, "The pull request was closed while the run worked, so nothing was pushed.") {
			t.Errorf("reply:\n%s", body)
		}
		if n := g.gh.CountRequests("POST", "/repos/octo/pager/git/refs") + g.gh.CountRequests("PATCH", "/repos/octo/pager/git/refs/heads/*/*"); n != 1 {
			t.Errorf("%d pushes, want the issue run's only", n)
		}
	})
	for _, tt := range []struct {
		name   string
		when   func(g *ghRun, del func())
		state  string
		golden string
		wants  []string
	}{
		{"BranchDeletedBeforeTheRun", func(g *ghRun, del func()) { del() }, run.StateSkipped, "followup-branch-deleted",
			[]string{"The pull request is closed: its branch `frognano/issue-7` was deleted", "Restore the branch"}},
		{"BranchDeletedBeforeTheClone", func(g *ghRun, del func()) { g.gh.BeforeNext("GET", "/repos/octo/pager/issues/7", del) },
			run.StateFailed, "followup-branch-gone", []string{"The branch `frognano/issue-7` no longer exists on GitHub", "Restore the branch"}},
		{"BranchDeletedWhileItWorks", func(g *ghRun, del func()) {
			g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
				del()
				return runtest.GoodOutcome(), nil
			})
		}, run.StateSkipped, "followup-branch-deleted-while-it-works",
			[]string{"The pull request was closed while the run worked: its branch `frognano/issue-7` was deleted", "Restore the branch"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := setupGitHub(t)
			pr := g.openPR(t)
			tt.when(g, func() { g.gh.DeleteBranch(g.hub, branch) })
			id := g.acceptFollowUp(t, pr)
			r := g.Work(t, id, 1)
			if r.Retried() {
				t.Fatalf("attempt = %v, want no retry", r)
			}
			row := g.Row(t, id)
			if row.State != tt.state {
				t.Errorf("run %+v, want %s", row, tt.state)
			}
			body := g.reply(t, pr, tt.golden)
			for _, w := range tt.wants {
				if !strings.Contains(body, w) {
					t.Errorf("the reply lacks %q:\n%s", w, body)
				}
			}
			if g.gh.Branch(g.hub, branch) != nil {
				t.Error("the deleted branch exists again")
			}
			if n := g.gh.CountRequests("POST", "/repos/octo/pager/git/refs") + g.gh.CountRequests("PATCH", "/repos/octo/pager/git/refs/heads/*/*"); n != 1 {
				t.Errorf("%d pushes, want the issue run's only", n)
			}
		})
	}
}
