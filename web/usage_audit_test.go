package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

// TestRunPageShowsUsageAndAuditTrail: the run page shows what the run used, who started and
// who stopped it, and its writes on GitHub with their request ids, as inert text; an object's
// link that is not http(s) is not a link.
func TestRunPageShowsUsageAndAuditTrail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.auth.allow("alice", "octo/pager")
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateCancelled, ExitReason: "cancelled"})
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET cached_tokens = 1200, sandbox_cpu_ms = 12500, sandbox_peak_bytes = 314572800,
		agent_attempts = 2, stopped_by = 'bob', error = 'issue unlabeled' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	st := run.NewStore(b.pool, nil)
	for _, e := range []githubapp.AuditEntry{
		{RunID: id, Action: "comment.created", Method: "POST", Path: "/repos/octo/pager/issues/7/comments", Status: 201,
			ObjectType: "comment", ObjectID: "1001", ObjectURL: "https://github.example/octo/pager/issues/7#issuecomment-1001", RequestID: "F00D:1:2"},
		{RunID: id, Action: "branch.created", Method: "POST", Path: "/repos/octo/pager/git/refs", ObjectType: "branch",
			ObjectID: "frognano/issue-7<script>", ObjectSHA: "0123456789abcdef0123456789abcdef01234567", ObjectURL: "javascript:alert(1)"},
		// A write whose answer never came, and one GitHub refused (issue 28).
		{RunID: id, Action: "comment.edited", Method: "PATCH", Path: "/repos/octo/pager/issues/comments/1001", ObjectType: "comment",
			ObjectID: "1001", Outcome: githubapp.OutcomeUnknown, Detail: "timed out while waiting for GitHub's answer"},
		{RunID: id, Action: "review.requested", Method: "POST", Path: "/repos/octo/pager/pulls/8/requested_reviewers", Status: 422,
			ObjectType: "pull_request", ObjectID: "#8 @mallory", Outcome: githubapp.OutcomeRefused, Detail: "GitHub answered 422", RequestID: "F00D:1:3"},
	} {
		if err := st.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	resp := b.get(t, "/runs/"+itoa(id), "alice")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	raw, _ := io.ReadAll(resp.Body)
	page := string(raw)
	for _, want := range []string{"3000 prompt (1200 cached), 400 completion", "12.5s CPU, peak memory 300 MiB", "2 agent attempts in 1 try",
		"@maintainer (labelled the issue)", "@bob (issue unlabeled)", "comment.created", "F00D:1:2",
		`href="https://github.example/octo/pager/issues/7#issuecomment-1001"`, "0123456789abcdef0123456789abcdef01234567",
		"<td>done (201)</td>", `<td class="problem">unknown: timed out while waiting for GitHub&#39;s answer; it may have happened, look on GitHub</td>`,
		`<td class="problem">refused (422)</td>`, "pull_request #8 @mallory"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>", `href="javascript:`} {
		if strings.Contains(page, bad) {
			t.Errorf("the run page holds %q", bad)
		}
	}
}
