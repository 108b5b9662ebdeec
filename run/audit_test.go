package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestAuditTrailOfAFullRun: every write a run makes on GitHub (the reaction, the status
// comment and its edits, the Git objects and the branch, the pull request, the review request,
// the check run) is in its audit trail once, with the request id GitHub answered it with, the
// branch with the commit GitHub has and the review request with who was asked; no row holds a
// token or any text of the issue or the comments. `frognano runs show --audit` reads it
// through run.Reader.
func TestAuditTrailOfAFullRun(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	a.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.Check = &githubapp.CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "success", Title: "All pass.", Summary: "Tests pass."}
		return o, nil
	})
	id, r := a.label(t, a.hub, 7)
	if row := a.Row(t, id); !r.Completed() || row.State != run.StateSucceeded {
		t.Fatalf("run: %v %+v", r, row)
	}
	runtest.RequireEveryWriteAudited(t, a.gh, a.Pool)
	trail, err := run.NewStore(a.Pool, nil).Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, e := range trail {
		actions[e.Action]++
		if e.RunID != id || e.Outcome != githubapp.OutcomeDone {
			t.Errorf("entry %+v of another run, or not done", e)
		}
	}
	for action, want := range map[string]int{"reaction.created": 1, "comment.created": 1, "branch.created": 1,
		"pull_request.created": 1, "check_run.created": 1, "review.requested": 1} {
		if actions[action] != want {
			t.Errorf("%d %s in the trail, want %d (all: %v)", actions[action], action, want, actions)
		}
	}
	if actions["comment.edited"] < 1 {
		t.Errorf("no edit of the status comment in the trail: %v", actions)
	}
	head := a.gh.Branch(a.hub, "frognano/issue-7")
	prs := a.gh.PRs(a.hub)
	for _, e := range trail {
		switch e.Action {
		case "branch.created":
			if head == nil || e.ObjectSHA != head.SHA || e.ObjectID != "frognano/issue-7" {
				t.Errorf("push %+v; the branch's head on GitHub is %+v", e, head)
			}
		case "pull_request.created":
			if len(prs) != 1 || e.ObjectID != fmt.Sprintf("#%d", prs[0].Number) || e.ObjectURL == "" {
				t.Errorf("pull request entry %+v", e)
			}
		case "review.requested":
			// Who was asked, as a login: the labeller.
			if len(prs) != 1 || e.ObjectID != fmt.Sprintf("#%d @maintainer", prs[0].Number) {
				t.Errorf("review request entry %+v", e)
			}
		case "comment.created":
			if cs := a.gh.Comments(a.hub, 7); len(cs) != 1 || e.ObjectID != fmt.Sprint(cs[0].ID) {
				t.Errorf("comment entry %+v", e)
			}
		}
	}
	noSecretInTheTrail(t, a)
}

// noSecretInTheTrail: every column of every row, against the tokens the fake issued and the
// texts of the issue, the comments and the pull request.
func noSecretInTheTrail(t *testing.T, a *auditRun) {
	t.Helper()
	runtest.RequireNoSecretInTheAudit(t, a.gh, a.Pool, "Pager skips the last page", "Steps: open page 3.", "frognano run", "This fixes the pager.")
}

// TestAuditTrailOfARefusedRun: a run GitHub refuses, and one frognano refuses for want of
// permission: every write either made, GitHub's refusal of the branch included (it was in no
// trail before), is in the trail with its status.
func TestAuditTrailOfARefusedRun(t *testing.T) {
	t.Parallel()
	t.Run("BranchRefused", func(t *testing.T) {
		t.Parallel()
		a := setupAudited(t)
		a.gh.RefusePushes(a.hub, githubtest.RefuseRuleset)
		id, _ := a.label(t, a.hub, 7) // the job ends cancelled: GitHub will refuse again
		if row := a.Row(t, id); row.State != run.StateFailed || row.ExitReason != run.ExitGitHubRefused {
			t.Fatalf("run: %+v", row)
		}
		trail := runtest.RequireEveryWriteAudited(t, a.gh, a.Pool)
		var refused, unlabelled bool
		for _, e := range trail {
			refused = refused || e.Action == "branch.created" && e.Outcome == githubapp.OutcomeRefused && e.Status >= 400 && e.ObjectID == "frognano/issue-7"
			unlabelled = unlabelled || e.Action == "label.removed" && e.ObjectID == "#7 frognano" && e.RunID == id
		}
		if !refused || !unlabelled {
			t.Errorf("the refused branch (%v) or the label's removal (%v) is missing: %+v", refused, unlabelled, trail)
		}
		noSecretInTheTrail(t, a)
	})
	t.Run("NoPermission", func(t *testing.T) {
		t.Parallel()
		a := setupAudited(t)
		a.gh.SetPermission(a.hub, "maintainer", "read")
		id, r := a.label(t, a.hub, 7)
		if row := a.Row(t, id); !r.Completed() || row.State == run.StateSucceeded {
			t.Fatalf("run: %v %+v", r, row)
		}
		if trail := runtest.RequireEveryWriteAudited(t, a.gh, a.Pool); len(trail) == 0 {
			t.Error("the refusal's comment is in no trail")
		}
	})
}

// TestWhoStartedAndStoppedARun: what `frognano runs show` and the run page print of who
// started a run of each kind and who stopped it (the queue's tests prove that an unlabel
// records its sender).
func TestWhoStartedAndStoppedARun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		r                run.Record
		started, stopped string
	}{
		{run.Record{Kind: run.KindIssue, Labeler: "maintainer", State: run.StateCancelled, StoppedBy: "carol", Error: "issue unlabeled"},
			"@maintainer (labelled the issue)", "@carol (issue unlabeled)"},
		{run.Record{Kind: run.KindIssue, Trigger: run.TriggerMention, Labeler: "asker", State: run.StateSucceeded},
			"@asker (mentioned the App on the issue)", ""},
		{run.Record{Kind: run.KindFollowUp, Labeler: "reviewer", State: run.StateCancelled, Error: "issue closed"},
			"@reviewer (a follow-up request on the pull request)", "frognano (issue closed)"},
		{run.Record{Kind: run.KindCI, Labeler: "github-actions", State: run.StateSucceeded},
			"CI (a failed check suite on the pull request; github-actions)", ""},
	} {
		if got := run.StartedBy(tt.r); got != tt.started {
			t.Errorf("StartedBy(%+v) = %q, want %q", tt.r, got, tt.started)
		}
		if got := run.StoppedBy(tt.r); got != tt.stopped {
			t.Errorf("StoppedBy(%+v) = %q, want %q", tt.r, got, tt.stopped)
		}
	}
}
