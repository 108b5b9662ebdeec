package queue

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
)

// auditRow is a row of run_audit as the tests read it, whichever run it belongs to.
type auditRow struct {
	RunID                                   int64
	Action, Method, Path, Outcome, Detail   string
	Status                                  int
	ObjectID, ObjectSHA, ObjectURL, Request string
}

// everyWriteAudited reads the whole audit trail (every run's) and checks it against the writes
// the fake GitHub received on its API, but the App's own token requests (no run's): each write
// GitHub answered is in the trail, under runs as many times as it was made on behalf of runs,
// with GitHub's status and request id, and the trail holds nothing else. It returns the rows.
func everyWriteAudited(t *testing.T, gh *githubtest.Server, pool *pgxpool.Pool) []auditRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT run_id, action, method, path, outcome, detail, status, object_id, object_sha,
		object_url, request_id FROM run_audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	trail, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (auditRow, error) {
		var a auditRow
		return a, r.Scan(&a.RunID, &a.Action, &a.Method, &a.Path, &a.Outcome, &a.Detail, &a.Status, &a.ObjectID, &a.ObjectSHA, &a.ObjectURL, &a.Request)
	})
	if err != nil {
		t.Fatal(err)
	}
	byRequest := map[string][]auditRow{}
	for _, e := range trail {
		if e.Request == "" {
			t.Errorf("an entry without GitHub's request id in a trail where every write was answered: %+v", e)
		}
		byRequest[e.Request] = append(byRequest[e.Request], e)
	}
	writes := 0
	for _, q := range gh.Requests() {
		write := q.Method == "POST" || q.Method == "PATCH" || q.Method == "PUT" || q.Method == "DELETE"
		if !write || q.RequestID == "" || strings.HasSuffix(q.Path, "/access_tokens") {
			continue
		}
		writes++
		es, ok := byRequest[q.RequestID]
		if !ok {
			t.Errorf("write %s %s (request %s, answered %d) is not in the audit trail", q.Method, q.Path, q.RequestID, q.Status)
			continue
		}
		runs := map[int64]bool{}
		for _, e := range es {
			if e.Method != q.Method || !strings.HasSuffix(q.Path, e.Path) || e.Status != q.Status {
				t.Errorf("request %s: recorded %s %s %d, GitHub got %s %s and answered %d", q.RequestID, e.Method, e.Path, e.Status, q.Method, q.Path, q.Status)
			}
			if runs[e.RunID] {
				t.Errorf("request %s recorded twice for run %d", q.RequestID, e.RunID)
			}
			runs[e.RunID] = true
			want := githubapp.OutcomeDone
			if q.Status >= 300 {
				want = githubapp.OutcomeRefused
			}
			if e.Outcome != want {
				t.Errorf("request %s answered %d: outcome %q, want %q", q.RequestID, q.Status, e.Outcome, want)
			}
		}
	}
	if writes != len(byRequest) {
		t.Errorf("%d writes on GitHub, %d in the audit trail", writes, len(byRequest))
	}
	return trail
}

// TestAuditTrailOfAFullRun: every write a run makes on GitHub (the reaction, the status
// comment and its edits, the Git objects and the branch, the pull request, the review request,
// the check run) is in its audit trail once, with the request id GitHub answered it with, the
// branch with the commit GitHub has and the review request with who was asked; no row holds a
// token or any text of the issue or the comments. `frognano runs show --audit` reads it
// through run.Reader.
func TestAuditTrailOfAFullRun(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	a.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := goodOutcome()
		o.Check = &githubapp.CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "success", Title: "All pass.", Summary: "Tests pass."}
		return o, nil
	})
	res, r := a.label(t, a.hub, 7)
	if row := a.row(t, res.RunID); !r.completed() || row.State != run.StateSucceeded {
		t.Fatalf("run: %v %+v", r, row)
	}
	everyWriteAudited(t, a.gh, a.pool)
	trail, err := run.NewStore(a.pool, nil).Audit(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, e := range trail {
		actions[e.Action]++
		if e.RunID != res.RunID || e.Outcome != githubapp.OutcomeDone {
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
func noSecretInTheTrail(t *testing.T, a *auditBundle) {
	t.Helper()
	secrets := append(a.gh.IssuedTokens(), "Pager skips the last page", "Steps: open page 3.", "frognano run", "This fixes the pager.")
	rows, err := a.pool.Query(context.Background(), `SELECT row_to_json(a)::text FROM run_audit a`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(raw, s) {
				t.Errorf("audit row holds %q: %s", s, raw)
			}
		}
		for _, s := range []string{"ghs_", "Bearer", "token"} {
			if strings.Contains(raw, s) {
				t.Errorf("audit row holds %q: %s", s, raw)
			}
		}
	}
}

// TestAuditTrailOfAStoppedRun: `@APP stop` on the pull request of a finished run stops a
// follow-up that waited between attempts. The edit of its reply and the answer to the stop
// request are that run's writes, in its trail (they were in nobody's before), and no write on
// GitHub, the first run's and the stop's, is missing from the trail.
func TestAuditTrailOfAStoppedRun(t *testing.T) {
	t.Parallel()
	a := setupAudited(t)
	first, r := a.label(t, a.hub, 7)
	if !r.completed() {
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
	everyWriteAudited(t, a.gh, a.pool)
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
	noSecretInTheTrail(t, a)
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
		res, _ := a.label(t, a.hub, 7) // the job ends cancelled: GitHub will refuse again
		if row := a.row(t, res.RunID); row.State != run.StateFailed || row.ExitReason != run.ExitGitHubRefused {
			t.Fatalf("run: %+v", row)
		}
		trail := everyWriteAudited(t, a.gh, a.pool)
		var refused, unlabelled bool
		for _, e := range trail {
			refused = refused || e.Action == "branch.created" && e.Outcome == githubapp.OutcomeRefused && e.Status >= 400 && e.ObjectID == "frognano/issue-7"
			unlabelled = unlabelled || e.Action == "label.removed" && e.ObjectID == "#7 frognano" && e.RunID == res.RunID
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
		res, r := a.label(t, a.hub, 7)
		if row := a.row(t, res.RunID); !r.completed() || row.State == run.StateSucceeded {
			t.Fatalf("run: %v %+v", r, row)
		}
		if trail := everyWriteAudited(t, a.gh, a.pool); len(trail) == 0 {
			t.Error("the refusal's comment is in no trail")
		}
	})
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
