package server

import (
	"context"
	"net/http"
	"testing"
)

func lineComment(body, branch, author, typ string) func(map[string]any) {
	return func(m map[string]any) {
		c := m["comment"].(map[string]any)
		c["body"] = body
		u := c["user"].(map[string]any)
		u["login"], u["type"] = author, typ
		m["pull_request"].(map[string]any)["head"].(map[string]any)["ref"] = branch
	}
}

// TestWebhookReviewCommentQueuesAFollowUp: a line comment on a frognano PR that mentions the App
// queues a follow-up like a conversation comment, whose source is the comment's review (the
// worker reads its line comments), on any PR; one that does not mention the App, a bot's and an
// edit are ignored; `@APP stop` in a line comment requests a stop.
func TestWebhookReviewCommentQueuesAFollowUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tt := range []struct {
		name, action, body, branch, author, typ, status string
	}{
		{"NoMention", "created", "Maybe you should use more emoji on this line.", "frognano/issue-1", "Codertocat", "User", "ignored"},
		{"Bot", "created", "@" + testSlug + " fix", "frognano/issue-1", "ci[bot]", "Bot", "ignored"},
		{"Edited", "edited", "@" + testSlug + " fix", "frognano/issue-1", "Codertocat", "User", "ignored"},
		{"Mention", "created", "@" + testSlug + " use a list comprehension here", "frognano/issue-1", "Codertocat", "User", "queued"},
		{"Stop", "created", "@" + testSlug + " stop", "frognano/issue-1", "Codertocat", "User", "stop_requested"},
		// A mention asks on any pull request (the fixture's review is the active run's source, so it is counted there).
		{"OtherPR", "created", "@" + testSlug + " fix", "changes", "Codertocat", "User", "already_active"},
	} {
		raw := fixture(t, "pull_request_review_comment/created.payload.json", lineComment(tt.body, tt.branch, tt.author, tt.typ),
			func(m map[string]any) { m["action"] = tt.action })
		rec := b.send(t, "pull_request_review_comment", raw)
		if got := decodeResponse(t, rec).Status; got != tt.status || (got == "ignored") != (rec.Code == http.StatusAccepted) {
			t.Errorf("%s: %d %s, want %s", tt.name, rec.Code, got, tt.status)
		}
	}
	var kind, request, url, labeler string
	var issue int
	var source int64
	if err := b.pool.QueryRow(context.Background(), `SELECT kind, request, request_url, issue, labeler, source_id FROM runs ORDER BY id LIMIT 1`).
		Scan(&kind, &request, &url, &issue, &labeler, &source); err != nil {
		t.Fatal(err)
	}
	if kind != "followup" || request != "@"+testSlug+" use a list comprehension here" || issue != 2 || labeler != "Codertocat" ||
		url != "https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630" || source != 237895671 {
		t.Errorf("run = %s %q %s %d %s %d", kind, request, url, issue, labeler, source)
	}
	var stops int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_stop'`).Scan(&stops); err != nil || stops != 1 {
		t.Errorf("stop jobs %d, %v", stops, err)
	}
}
