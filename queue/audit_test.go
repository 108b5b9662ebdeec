package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

// TestAuditTrailOfAFullRun: every write a run makes on GitHub (the reaction, the status
// comment and its edits, the push, the pull request, the check run) is in its audit trail
// once, with the request id GitHub answered it with, and the push with the commit GitHub has;
// no row holds a token or any text of the issue or the comments. `frognano runs show --audit`
// reads it through run.Reader.
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
	trail, err := run.NewStore(a.pool, nil).Audit(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]run.AuditEntry{}
	actions := map[string]int{}
	for _, e := range trail {
		actions[e.Action]++
		if e.RunID != res.RunID {
			t.Errorf("entry %+v of another run", e)
		}
		if e.RequestID == "" {
			t.Errorf("entry without GitHub's request id: %+v", e)
		}
		if _, dup := byID[e.RequestID]; dup {
			t.Errorf("request %s recorded twice", e.RequestID)
		}
		byID[e.RequestID] = e
	}
	// Every write the fake answered with a 2xx, but the token requests (the App's, not a
	// run's), is in the trail.
	writes := 0
	for _, q := range a.gh.Requests() {
		write := q.Method == "POST" || q.Method == "PATCH" || q.Method == "PUT" || q.Method == "DELETE"
		if !write || q.RequestID == "" || q.Status/100 != 2 || strings.HasSuffix(q.Path, "/access_tokens") {
			continue
		}
		writes++
		e, ok := byID[q.RequestID]
		if !ok {
			t.Errorf("write %s %s (request %s) is not in the audit trail", q.Method, q.Path, q.RequestID)
			continue
		}
		if e.Method != q.Method || !strings.HasSuffix(q.Path, e.Path) {
			t.Errorf("request %s: recorded %s %s, GitHub got %s %s", q.RequestID, e.Method, e.Path, q.Method, q.Path)
		}
	}
	if writes != len(byID) {
		t.Errorf("%d writes on GitHub, %d in the audit trail", writes, len(byID))
	}
	for action, want := range map[string]int{"reaction.created": 1, "comment.created": 1, "branch.created": 1,
		"pull_request.created": 1, "check_run.created": 1} {
		if actions[action] != want {
			t.Errorf("%d %s in the trail, want %d (all: %v)", actions[action], action, want, actions)
		}
	}
	if actions["comment.edited"] < 1 {
		t.Errorf("no edit of the status comment in the trail: %v", actions)
	}
	head := a.gh.Branch(a.hub, "frognano/issue-7")
	for _, e := range trail {
		switch e.Action {
		case "branch.created":
			if head == nil || e.ObjectSHA != head.SHA || e.ObjectID != "frognano/issue-7" {
				t.Errorf("push %+v; the branch's head on GitHub is %+v", e, head)
			}
		case "pull_request.created":
			if prs := a.gh.PRs(a.hub); len(prs) != 1 || e.ObjectID != fmt.Sprintf("#%d", prs[0].Number) || e.ObjectURL == "" {
				t.Errorf("pull request entry %+v", e)
			}
		case "comment.created":
			if cs := a.gh.Comments(a.hub, 7); len(cs) != 1 || e.ObjectID != fmt.Sprint(cs[0].ID) {
				t.Errorf("comment entry %+v", e)
			}
		}
	}
	// Nothing secret, no text: every column of every row, against the tokens the fake issued
	// and the texts of the issue, the comment and the pull request.
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
