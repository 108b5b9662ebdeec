package run_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// branchOff creates branch at the head of main in the fake's repository, as a person pushing a
// new branch does.
func (g *ghRun) branchOff(t *testing.T, branch string) {
	t.Helper()
	if out, err := exec.Command("git", "-C", g.hub.Dir, "branch", branch, "main").CombinedOutput(); err != nil {
		t.Fatalf("git branch %s: %v: %s", branch, err, out)
	}
}

// Case 3 (continued): GitHub refuses to delete a default branch, so deleting it means making
// another branch the default, then deleting the old one. Before the clone the run follows the
// new default; while the run works, its pull request's base is gone, and the run says so.
func TestDefaultBranchDeleted(t *testing.T) {
	t.Parallel()
	deleteMain := func(g *ghRun, t *testing.T) {
		g.branchOff(t, "trunk")
		g.gh.SetDefaultBranch(g.hub, "trunk")
		g.gh.DeleteBranch(g.hub, "main")
	}
	t.Run("BeforeTheClone", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		deleteMain(g, t)
		id := g.Label(t, 7)
		if r := g.Work(t, id, 1); !r.Completed() {
			t.Fatal(r)
		}
		if row := g.Row(t, id); row.State != run.StateSucceeded {
			t.Fatalf("run %+v", row)
		}
		if prs := g.gh.PRs(g.hub); len(prs) != 1 || prs[0].Base != "trunk" {
			t.Errorf("pull requests %+v, want one against trunk, the default branch now", prs)
		}
	})
	t.Run("WhileItWorks", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			deleteMain(g, t)
			return runtest.GoodOutcome(), nil
		})
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "base-deleted", run.ExitGitHubRefused, true,
			"`POST /api/v3/repos/octo/pager/pulls` with 422 “Validation Failed”", "The base branch no longer exists")
		if len(g.gh.PRs(g.hub)) != 0 {
			t.Error("a pull request was opened against a branch that is gone")
		}
	})
}

// Case 2 (continued): the repository is read-only to the App because its installation grants
// contents: read only (an installation made before the App asked for write, or an owner who
// granted less): no run can push there. The run ends before any work with one comment that
// names the permission and who approves it; nothing is cloned, pushed or retried.
func TestReadOnlyContents(t *testing.T) {
	t.Parallel()
	g := setupGitHub(t)
	g.gh.SetInstallationPermissions(5, map[string]string{"contents": "read", "issues": "write", "pull_requests": "write", "metadata": "read"})
	id := g.Label(t, 7)
	if r := g.Work(t, id, 1); !r.Completed() {
		t.Fatalf("attempt = %v, want the run ended without a retry", r)
	}
	kept, err := run.NewStore(g.Pool, nil).Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if kept.State != run.StateFailed || kept.ExitReason != run.ExitPermissions || kept.Attempts != 1 {
		t.Errorf("run %+v, want failed as %s after one attempt", kept, run.ExitPermissions)
	}
	reason := g.GitHub.Normalize(kept.Error)
	golden.Check(t, "queue-refused-contents-read.txt", reason+"\n")
	comments := g.gh.Comments(g.hub, 7)
	if len(comments) != 1 {
		t.Fatalf("%d comments, want one: %+v", len(comments), comments)
	}
	body := g.GitHub.Normalize(comments[0].Body)
	golden.Check(t, "queue-refused-contents-read.md", body)
	for _, want := range []string{reason, "`contents: read, needs write`", "an owner of octo can approve them"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if n := g.gh.CountRequests("*", "/octo/pager.git/*"); n != 0 {
		t.Errorf("%d git requests, want none: nothing to clone for a run that cannot push", n)
	}
}

// Case 2 (continued): the repository is transferred to another account. Its installation
// tokens are asked for by repository id, so a rename is followed (TestRefusedRepository); a
// transfer takes the repository out of the installation the label came from, which GitHub then
// refuses tokens for (422), whether or not the App is installed on the new account too. The
// installation can no longer comment there, so the reason is in the run's record, with what
// to do in either case.
func TestRepositoryTransferred(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		to   int64 // the App's installation on the new account; 0: none
	}{{"ToAnAccountWithoutTheApp", 0}, {"ToAnAccountWithTheApp", 6}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := setupGitHub(t)
			if tt.to != 0 {
				g.gh.AddInstallation(tt.to, g.gh.AddRepo("octo-new", "other", map[string]string{"x": "y\n"}))
			}
			id := g.Label(t, 7)
			g.gh.TransferRepo(g.hub, "octo-new", tt.to)
			g.checkRefusal(t, id, g.Work(t, id, 1), "transferred", run.ExitGitHubRefused, false,
				"with 422 “There is at least one repository that does not exist or is not accessible to the parent installation.”",
				"transferred to another account", "label the issue again there")
		})
	}
	t.Run("WhileItWorks", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			g.gh.TransferRepo(g.hub, "octo-new", 0)
			return runtest.GoodOutcome(), nil
		})
		id := g.Label(t, 7)
		// The push to the old name finds no repository there (404), which is also what a
		// rename looks like to git: the run is tried again, and the next attempt, which asks
		// for its token by the repository's id, follows a rename or learns of the transfer.
		if r := g.Work(t, id, 1); !r.Retried() {
			t.Fatalf("attempt 1 = %v, want a retry", r)
		}
		g.checkRecord(t, id, g.Work(t, id, 2), "transferred-while-it-works", run.ExitGitHubRefused,
			"transferred to another account", "label the issue again there")
	})
}
