package server

import (
	"context"
	"net/http"
	"testing"
)

func reviewed(state, body, branch, author, typ string) func(map[string]any) {
	return func(m map[string]any) {
		r := m["review"].(map[string]any)
		r["state"], r["body"] = state, body
		u := r["user"].(map[string]any)
		u["login"], u["type"] = author, typ
		m["pull_request"].(map[string]any)["head"].(map[string]any)["ref"] = branch
	}
}

// TestWebhookReviewQueuesAFollowUp: a submitted review of a frognano PR that requests changes
// or mentions the App queues a follow-up with its text, and so does a review of another PR that
// mentions the App; a plain comment review, another PR's review that only requests changes and
// a bot's are ignored.
func TestWebhookReviewQueuesAFollowUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tt := range []struct {
		name, state, body, branch, author, typ, status string
	}{
		{"PlainComment", "commented", "nice", "frognano/issue-1", "Codertocat", "User", "ignored"},
		{"OtherPR", "changes_requested", "no", "changes", "Codertocat", "User", "ignored"},
		{"Bot", "changes_requested", "no", "frognano/issue-1", "ci[bot]", "Bot", "ignored"},
		{"Mention", "commented", "@" + testSlug + " rename the helper", "frognano/issue-1", "Codertocat", "User", "queued"},
		{"Stop", "commented", "@" + testSlug + " stop", "frognano/issue-1", "Codertocat", "User", "stop_requested"},
		// A mention asks on any pull request (the fixture's review is the active run's source, so it is counted there).
		{"OtherPRMention", "commented", "@" + testSlug + " add a test", "changes", "Codertocat", "User", "already_active"},
	} {
		rec := b.send(t, "pull_request_review", fixture(t, "pull_request_review/submitted.payload.json",
			installation(5), reviewed(tt.state, tt.body, tt.branch, tt.author, tt.typ)))
		if got := decodeResponse(t, rec).Status; got != tt.status || (got == "ignored") != (rec.Code == http.StatusAccepted) {
			t.Errorf("%s: %d %s, want %s", tt.name, rec.Code, got, tt.status)
		}
	}
	var kind, request, url string
	var issue int
	var source int64
	if err := b.pool.QueryRow(context.Background(), `SELECT kind, request, request_url, issue, source_id FROM runs ORDER BY id LIMIT 1`).Scan(&kind, &request, &url, &issue, &source); err != nil {
		t.Fatal(err)
	}
	if kind != "followup" || request != "@"+testSlug+" rename the helper" || issue != 2 ||
		url != "https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671" || source != 237895671 {
		t.Errorf("run = %s %q %s %d, source %d", kind, request, url, issue, source)
	}
}
