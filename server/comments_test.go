package server

import (
	"context"
	"net/http"
	"testing"
)

const testSlug = "frognano-app"

// onPR makes the issue_comment example a comment on pull request 77 by author with body.
func onPR(author, typ, body string) func(map[string]any) {
	return func(m map[string]any) {
		issue := m["issue"].(map[string]any)
		issue["number"] = 77
		issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/77"}
		onIssue(author, typ, body)(m)
	}
}

// commentSender sends b the issue_comment example (installation 5) edited by edit and extra,
// and returns the answer's HTTP status and its status field.
func commentSender(t *testing.T, b *bundle) func(edit func(map[string]any), extra ...func(map[string]any)) (int, string) {
	return func(edit func(map[string]any), extra ...func(map[string]any)) (int, string) {
		raw := fixture(t, "issue_comment/created.payload.json", append([]func(map[string]any){installation(5), edit}, extra...)...)
		rec := b.send(t, "issue_comment", raw)
		return rec.Code, decodeResponse(t, rec).Status
	}
}

// TestWebhookCommentMentioningTheAppQueuesAFollowUp: a mention on a PR queues a follow-up
// with the comment's text (checked later by the worker), and a second one waits for it; bots,
// other PRs' plain comments, issues, e-mail addresses and edits are ignored; `@APP stop`
// queues a stop request.
func TestWebhookCommentMentioningTheAppQueuesAFollowUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := commentSender(t, b)
	for _, tt := range []struct {
		name   string
		edit   func(map[string]any)
		extra  []func(map[string]any)
		status string
	}{
		{"Bot", onPR("frognano-app[bot]", "Bot", "@frognano-app do it again"), nil, "ignored"},
		{"BotTypedUser", onPR("ci[bot]", "User", "@frognano-app go"), nil, "ignored"},
		{"NoMention", onPR("Codertocat", "User", "looks good"), nil, "ignored"},
		{"EmailAddress", onPR("Codertocat", "User", "mail me@frognano-app.dev"), nil, "ignored"},
		{"OtherApp", onPR("Codertocat", "User", "@frognano-app2 go"), nil, "ignored"},
		{"Edited", onPR("Codertocat", "User", "@frognano-app go"), []func(map[string]any){action("edited")}, "ignored"},
		{"OnAnIssue", func(map[string]any) {}, nil, "ignored"},
		{"Stop", onPR("Codertocat", "User", "@Frognano-App stop."), nil, "stop_requested"},
		{"Request", onPR("Codertocat", "User", "@frognano-app please handle page 0"), nil, "queued"},
		// The first request's run has not passed its check: the next waits for it to end.
		{"AnotherRequest", onPR("Codertocat", "User", "@frognano-app and page 1"), nil, "waiting"},
	} {
		code, status := send(tt.edit, tt.extra...)
		if status != tt.status || (status == "ignored") != (code == http.StatusAccepted) {
			t.Errorf("%s: %d %s, want %s", tt.name, code, status, tt.status)
		}
	}
	var kind, request, url, labeler string
	var issue int
	if err := b.pool.QueryRow(context.Background(), `SELECT kind, request, request_url, labeler, issue FROM runs ORDER BY id LIMIT 1`).Scan(
		&kind, &request, &url, &labeler, &issue); err != nil {
		t.Fatal(err)
	}
	if kind != "followup" || request != "@frognano-app please handle page 0" || labeler != "Codertocat" || issue != 77 ||
		url != "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400" {
		t.Errorf("run = %s %q %s %s %d", kind, request, url, labeler, issue)
	}
	var stops int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_stop'
		AND args->>'requester' = 'Codertocat' AND (args->>'pr')::int = 77`).Scan(&stops); err != nil || stops != 1 {
		t.Errorf("stop jobs %d, %v", stops, err)
	}
}
