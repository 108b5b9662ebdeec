package queue

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// The audit trail of what the queue's own jobs write (run's audit_test.go proves a run's), and
// who the queue records as having stopped a run.

// TestAuditTrailOfAStoppedRun: `@APP stop` on the pull request of a finished run stops a
// follow-up that waited between attempts. The edit of its reply and the answer to the stop
// request are that run's writes, in its trail (they were in nobody's before), and no write on
// GitHub, the first run's and the stop's, is missing from the trail.
func TestAuditTrailOfAStoppedRun(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	first := a.acceptIssue(t)
	if r := a.work(t, first, 1); !r.completed() {
		t.Fatal(r)
	}
	prs := a.gh.PRs(a.hub)
	if len(prs) != 1 {
		t.Fatalf("pull requests %+v", prs)
	}
	pr := prs[0].Number
	req := RunRequest{InstallationID: 5, RepoID: a.hub.ID, Owner: "octo", Repo: "pager", Issue: pr, Labeler: "maintainer",
		Kind: run.KindFollowUp, Request: "@frognano also handle page 0"}
	res, err := a.client.Accept(context.Background(), a.delivery("issue_comment", "created"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept: %+v %v", res, err)
	}
	// The follow-up posted its reply in a first attempt and waits for the next.
	reply := a.gh.AddComment(a.hub, pr, githubtest.AppSlug+"[bot]", fmt.Sprintf("<!-- frognano:run:%d -->\nWorking on it.", res.RunID))
	if _, err := a.pool.Exec(context.Background(), `UPDATE runs SET comment_id = $2 WHERE id = $1`, res.RunID, reply); err != nil {
		t.Fatal(err)
	}
	sw := &stopWorker{pool: a.pool, gh: run.GitHubApp(a.app), log: slog.New(slog.DiscardHandler)}
	args := StopArgs{InstallationID: 5, RepoID: a.hub.ID, Owner: "octo", Repo: "pager", PR: pr, Requester: "maintainer"}
	if r := workJob(t, a.bundle, args, 1, river.Worker[StopArgs](sw)); !r.completed() {
		t.Fatal(r)
	}
	if got := a.row(t, res.RunID).State; got != run.StateCancelled {
		t.Fatalf("follow-up %s", got)
	}
	runtest.RequireEveryWriteAudited(t, a.gh, a.pool)
	trail, err := run.NewStore(a.pool, nil).Audit(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var edited, replied bool
	for _, e := range trail {
		switch {
		case e.Action == "comment.edited" && e.ObjectID == fmt.Sprint(reply):
			edited = true
		case e.Action == "comment.created" && e.Path == fmt.Sprintf("/repos/octo/pager/issues/%d/comments", pr):
			replied = true
		}
	}
	if !edited || !replied {
		t.Errorf("the stopped run's trail lacks the edit of its reply (%v) or the answer to the stop (%v): %+v", edited, replied, trail)
	}
	if firstTrail, _ := run.NewStore(a.pool, nil).Audit(context.Background(), first.RunID); len(firstTrail) == 0 {
		t.Error("the first run's trail is empty")
	}
	runtest.RequireNoSecretInTheAudit(t, a.gh, a.pool, "Pager skips the last page", "Steps: open page 3.", "frognano run", "This fixes the pager.")
}

// TestWhoStartedAndStoppedARun: the record says who labelled the issue and who removed the
// label (the webhook's sender), as `frognano runs show` and the run page print them.
func TestWhoStartedAndStoppedARun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	d := b.delivery("issues", "unlabeled")
	d.Sender = "carol"
	if _, err := b.client.Cancel(context.Background(), d, 42, 7, "issue unlabeled"); err != nil {
		t.Fatal(err)
	}
	rec, err := run.NewStore(b.pool, nil).Run(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.StartedBy(rec); got != "@maintainer (labelled the issue)" {
		t.Errorf("started by %q", got)
	}
	if got := run.StoppedBy(rec); got != "@carol (issue unlabeled)" {
		t.Errorf("stopped by %q", got)
	}
}
