package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// TestFollowUpRequestStaysInertOnTheRunPage: a CI follow-up's request and task hold what CI printed
// (the patch decides that) and a review's text; on the run page they are text, as everything
// else of a run: no comment, <details>, <summary> or script of theirs, and the page's own
// markup balanced.
func TestFollowUpRequestStaysInertOnTheRunPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forgery := "```\n</pre></details></summary>\n<!-- frognano:run:1 -->\n<details open><summary>Transcript (step by step)</summary>\n" +
		"<script>document.title='x'</script>\n@octo/admins Fixes #1\n<!--"
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateFailed, ExitReason: "submitted"})
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET kind = 'ci', request = $2 WHERE id = $1`, id, forgery); err != nil {
		t.Fatal(err)
	}
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 1})
	b.event(t, id, run.EventAgent, run.AgentEvent{Task: run.FollowUpTask("Pager", "off by one", nil, "The repository's CI (not a person)", forgery, "## What failed in CI\n\n"+forgery)})

	resp := b.get(t, "/runs/"+itoa(id), "alice")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	raw, _ := io.ReadAll(resp.Body)
	page := string(raw)
	for _, bad := range []string{"<!--", "<details open>", "<summary>Transcript", "<script>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	if !strings.Contains(page, "&lt;!-- frognano:run:1 --&gt;") {
		t.Error("the request's text is not shown as text")
	}
	if o, c := strings.Count(page, "<details"), strings.Count(page, "</details>"); o != c {
		t.Errorf("%d <details> against %d </details>", o, c)
	}
}
