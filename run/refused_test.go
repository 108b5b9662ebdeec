package run_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// ghRun is a pipeline whose runs talk to a fake GitHub through the real githubapp client:
// every refusal below is GitHub's own answer, read and worded by the code that runs in
// production. gh and hub are the fake and its repository octo/pager.
type ghRun struct {
	*runtest.Pipeline
	gh  *githubtest.Server
	hub *githubtest.Repo
}

func setupGitHub(t *testing.T) *ghRun {
	t.Helper()
	return ghRunOf(runtest.NewWithGitHub(t, runtest.GitHubOptions{}))
}

func ghRunOf(p *runtest.Pipeline) *ghRun {
	return &ghRun{Pipeline: p, gh: p.GitHub.Server, hub: p.GitHub.Repo}
}

// refusal is what a run GitHub refused must leave: failed with exitReason after the attempt r
// (final: the queue cancels the job, never retries it; r is the first attempt but where a test says otherwise), its record's error the same reason its comment shows
// (checked against golden file name+".txt"), and, when comment, exactly one comment on GitHub
// whose final text is golden file name+".md".
func (g *ghRun) checkRefusal(t *testing.T, id int64, r runtest.Attempt, name, exitReason string, comment bool, wants ...string) {
	t.Helper()
	reason := g.checkRecord(t, id, r, name, exitReason, wants...)
	comments := g.gh.Comments(g.hub, 7)
	if !comment {
		if len(comments) != 0 {
			t.Errorf("comments %+v where GitHub refuses the App's comments", comments)
		}
		return
	}
	if len(comments) != 1 {
		t.Fatalf("%d comments, want one: %+v", len(comments), comments)
	}
	body := g.GitHub.Normalize(comments[0].Body)
	golden.Check(t, "queue-refused-"+name+".md", body)
	if !strings.Contains(body, reason) || !strings.Contains(body, "`"+exitReason+"`") {
		t.Errorf("the comment does not give the run's reason %q:\n%s", reason, body)
	}
}

// checkRecord checks the run's record of a refusal (see checkRefusal) and returns its reason.
func (g *ghRun) checkRecord(t *testing.T, id int64, r runtest.Attempt, name, exitReason string, wants ...string) string {
	t.Helper()
	if !r.Final() {
		t.Fatalf("attempt = %v, want the job ended for good (no retry)", r)
	}
	kept, err := run.NewStore(g.Pool, nil).Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if kept.State != run.StateFailed || kept.ExitReason != exitReason || kept.Attempts != r.Number {
		t.Errorf("run %+v, want failed as %s after %d attempts", kept, exitReason, r.Number)
	}
	reason := g.GitHub.Normalize(kept.Error)
	golden.Check(t, "queue-refused-"+name+".txt", reason+"\n")
	for _, w := range wants {
		if !strings.Contains(reason, w) {
			t.Errorf("the run's reason lacks %q:\n%s", w, reason)
		}
	}
	return reason
}

// Case 1: GitHub refuses to create frognano/issue-7 (a ruleset, branch protection). The run
// ends at once with the status comment saying what GitHub said and which setting to change;
// the branch is not tried again. (A ruleset requiring signed commits accepts frognano's
// API-made commits, which GitHub signs: githubapp's TestPublishSignedCommitUnderRuleset.)
func TestRefusedPush(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rule  githubtest.PushRefusal
		wants []string
	}{
		{githubtest.RefuseRuleset, []string{"Repository rule violations found Cannot create ref due to creations being restricted.",
			"exclude `frognano/*` from the ruleset's target branches"}},
		{githubtest.RefuseProtection, []string{"Protected branch update failed", "does not match `frognano/*` (Settings → Branches)"}},
	} {
		t.Run(string(tt.rule), func(t *testing.T) {
			t.Parallel()
			g := setupGitHub(t)
			g.gh.RefusePushes(g.hub, tt.rule)
			id := g.Label(t, 7)
			r := g.Work(t, id, 1)
			g.checkRefusal(t, id, r, "push-"+string(tt.rule), run.ExitGitHubRefused, true, tt.wants...)
			if n := g.gh.CountRequests("POST", "/repos/octo/pager/git/refs"); n != 1 {
				t.Errorf("%d branch creations, want 1 (a refusal is not retried)", n)
			}
			if g.gh.Branch(g.hub, "frognano/issue-7") != nil || len(g.gh.PRs(g.hub)) != 0 {
				t.Error("a branch or pull request exists after the refused push")
			}
			if labels := g.gh.Labels(g.hub, 7); len(labels) != 0 {
				t.Errorf("labels %v: a failed run takes the label off, so that labelling again retries", labels)
			}
		})
	}
}

// Case 2: the repository is archived (before the run, or while it works), disabled by GitHub,
// or renamed between the label and the run.
func TestRefusedRepository(t *testing.T) {
	t.Parallel()
	t.Run("ArchivedBeforeTheRun", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.gh.ArchiveRepo(g.hub)
		id := g.Label(t, 7)
		// The reaction is the first write: 403, and GitHub refuses the comment saying so too.
		g.checkRefusal(t, id, g.Work(t, id, 1), "archived", run.ExitGitHubRefused, false,
			"403 “Repository was archived so is read-only.”", "unarchive it")
	})
	t.Run("ArchivedWhileItWorks", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			g.gh.ArchiveRepo(g.hub)
			return runtest.GoodOutcome(), nil
		})
		id := g.Label(t, 7)
		g.checkRecord(t, id, g.Work(t, id, 1), "archived-push", run.ExitGitHubRefused,
			"“Repository was archived so is read-only.”", "unarchive it")
		// GitHub refuses the edit of the status comment too (403, archived): one try, no more.
		if n := g.gh.CountRequests("PATCH", "/repos/octo/pager/issues/comments/*"); n != 1 {
			t.Errorf("%d edits of the status comment, want the one GitHub refused", n)
		}
	})
	t.Run("Disabled", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.gh.DisableRepo(g.hub)
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "disabled", run.ExitGitHubRefused, false,
			"403 “Repository access blocked”", "(reason: `tos`)")
	})
	t.Run("RenamedBeforeTheRun", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		id := g.Label(t, 7)
		g.gh.RenameRepo(g.hub, "octo-new", "pager-next")
		if r := g.Work(t, id, 1); !r.Completed() {
			t.Fatalf("attempt = %v, want the run to go ahead under the new name", r)
		}
		if row := g.Row(t, id); row.State != run.StateSucceeded {
			t.Fatalf("run %+v", row)
		}
		if prs := g.gh.PRs(g.hub); len(prs) != 1 || !prs[0].Draft {
			t.Errorf("pull requests %+v", prs)
		}
	})
}

// Case 3: the default branch renamed before the clone is followed (the clone takes GitHub's
// HEAD); renamed while the run works, the pull request's base is gone and the run says so.
func TestDefaultBranchRenamed(t *testing.T) {
	t.Parallel()
	t.Run("BeforeTheClone", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.gh.RenameBranch(g.hub, "main", "trunk")
		id := g.Label(t, 7)
		if r := g.Work(t, id, 1); !r.Completed() {
			t.Fatal(r)
		}
		if prs := g.gh.PRs(g.hub); len(prs) != 1 || prs[0].Base != "trunk" {
			t.Errorf("pull requests %+v, want one against trunk", prs)
		}
	})
	t.Run("WhileItWorks", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			g.gh.RenameBranch(g.hub, "main", "trunk")
			return runtest.GoodOutcome(), nil
		})
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "base-renamed", run.ExitGitHubRefused, true,
			"422 “Validation Failed”", "The base branch no longer exists")
	})
}

// Case 4: the issue was deleted, transferred or locked; the label was deleted; a follow-up's
// branch was deleted.
func TestRefusedIssue(t *testing.T) {
	t.Parallel()
	t.Run("Deleted", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.gh.DeleteIssue(g.hub, 7)
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "issue-deleted", run.ExitGitHubRefused, false,
			"410 “This issue was deleted”", "The issue was deleted")
	})
	t.Run("Transferred", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		elsewhere := g.gh.AddRepo("octo", "elsewhere", map[string]string{"x": "y\n"})
		g.gh.TransferIssue(g.hub, 7, elsewhere, 3)
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "issue-transferred", run.ExitGitHubRefused, false,
			"`POST /api/v3/repos/octo/pager/issues/7/reactions` with 404", "was moved (transferred or renamed)")
	})
	t.Run("Locked", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.gh.LockIssue(g.hub, 7)
		id := g.Label(t, 7)
		g.checkRefusal(t, id, g.Work(t, id, 1), "issue-locked", run.ExitGitHubRefused, false,
			"403 “Unable to create comment because issue is locked.”", "unlock it")
	})
	t.Run("LabelDeleted", func(t *testing.T) {
		t.Parallel()
		g := setupGitHub(t)
		g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
			out := runtest.GoodOutcome()
			out.Patch, out.ExitReason = nil, "max_turns"
			return out, nil
		})
		// The label is gone from the issue: removing it answers 404 "Label does not exist".
		g.gh.AddIssue(g.hub, 7, "Pager skips the last page", "Steps: open page 3.")
		id := g.Label(t, 7)
		if r := g.Work(t, id, 1); !r.Completed() {
			t.Fatalf("attempt = %v: a label that is already gone must not fail the run", r)
		}
		if row := g.Row(t, id); row.State != run.StateFailed || row.ExitReason != "max_turns" || row.Error == "" {
			t.Errorf("run %+v, want failed for the agent's own reason", row)
		}
		var refused int
		for _, q := range g.gh.Requests() {
			if q.Method == http.MethodDelete && strings.HasSuffix(q.Path, "/labels/frognano") && q.Status == http.StatusNotFound {
				refused++
			}
		}
		if refused != 1 {
			t.Errorf("%d label removals answered 404, want 1", refused)
		}
		// The status comment gives the run's own end, nothing about the label.
		comments := g.gh.Comments(g.hub, 7)
		if len(comments) != 1 {
			t.Fatalf("%d comments, want the status comment: %+v", len(comments), comments)
		}
		golden.Check(t, "queue-refused-label-deleted.md", g.GitHub.Normalize(comments[0].Body))
	})
}

// Case 5: the App was suspended, uninstalled or removed from the repository, or its key was
// rotated. The App can no longer comment at all; the reason is in the run's record (its page,
// `frognano runs`, the finished-runs metric by exit reason) and the log, and nothing retries.
func TestRefusedApp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		do    func(g *ghRun)
		wants []string
	}{
		{"suspended", func(g *ghRun) { g.gh.SuspendInstallation(5, true) }, []string{"the App is suspended on this installation (account octo)", "unsuspend it"}},
		{"uninstalled", func(g *ghRun) { g.gh.Uninstall(5) }, []string{"`GET /api/v3/app/installations/5` with 404", "no longer installed"}},
		{"removed-from-installation", func(g *ghRun) { g.gh.RemoveFromInstallation(5, g.hub) },
			[]string{"with 422 “There is at least one repository that does not exist or is not accessible to the parent installation.”", "Repository access"}},
		{"key-rotated", func(g *ghRun) { g.gh.RotateAppKey() }, []string{"401 “A JSON web token could not be decoded”", "`GITHUB_APP_PRIVATE_KEY`"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := setupGitHub(t)
			id := g.Label(t, 7)
			tt.do(g)
			g.checkRefusal(t, id, g.Work(t, id, 1), "app-"+tt.name, run.ExitGitHubRefused, false, tt.wants...)
			if n := g.gh.CountRequests("POST", "/app/installations/5/access_tokens"); n > 2 {
				t.Errorf("%d token requests: a refusal is asked again at most once (a 422 after a change of grants)", n)
			}
		})
	}
}

// Case 6: GitHub's secondary rate limit asks to wait longer than the run's whole budget. The
// run ends with a note saying so in its record, after the one refused request: no retry runs
// into it again, and nothing more is sent to GitHub before the wait is over (go-github keeps
// the limit and refuses the label's removal and the comment itself, without a request).
func TestSecondaryRateLimitOutlastsTheBudget(t *testing.T) {
	t.Parallel()
	g := setupGitHub(t)
	g.Config.JobTimeout = time.Hour
	g.gh.FailNext("POST", "/repos/*/*/issues/*/reactions", http.StatusForbidden, map[string]string{"Retry-After": "7200"}, 1)
	id := g.Label(t, 7)
	g.checkRefusal(t, id, g.Work(t, id, 1), "rate-limited", run.ExitGitHubRateLimited, false,
		"You have exceeded a secondary rate limit", "wait 2h0m0s (Retry-After)", "longer than the run's time budget of 1h0m0s")
	if n := len(g.gh.Requests()); n != 7 {
		t.Errorf("%d requests: want the installation, the token, the repository, the settings (the organisation's .github, which the "+
			"installation does not reach, and the repository's file, absent), the permission, the refused reaction and nothing after it:\n%+v", n, g.gh.Requests())
	}
}
