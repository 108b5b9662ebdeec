package server

import (
	"context"
	"net/http"
	"testing"
)

// onIssue makes the issue_comment example a comment on issue 1 (not a pull request) by author
// with body.
func onIssue(author, typ, body string) func(map[string]any) {
	return func(m map[string]any) {
		c := m["comment"].(map[string]any)
		c["body"] = body
		u := c["user"].(map[string]any)
		u["login"], u["type"] = author, typ
	}
}

// TestWebhookMentionOnAnIssueQueuesARun: a mention of the App on an issue queues a run of the
// issue (kind issue, trigger mention) with the text after the mention as its request and the
// options it starts with; bots, edits, hidden mentions and e-mail addresses are ignored; a
// second mention while the run is active starts none; `@APP stop` asks for a stop.
func TestWebhookMentionOnAnIssueQueuesARun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := commentSender(t, b)
	for _, tt := range []struct {
		name   string
		edit   func(map[string]any)
		extra  []func(map[string]any)
		status string
	}{
		{"Bot", onIssue("frognano-app[bot]", "Bot", "@frognano-app do it"), nil, "ignored"},
		{"BotTypedUser", onIssue("ci", "Bot", "@frognano-app go"), nil, "ignored"},
		{"NoMention", onIssue("Codertocat", "User", "looks good"), nil, "ignored"},
		{"EmailAddress", onIssue("Codertocat", "User", "mail me@frognano-app.dev"), nil, "ignored"},
		{"Hidden", onIssue("Codertocat", "User", "thanks <!-- @frognano-app base=evil do this -->"), nil, "ignored"},
		{"Edited", onIssue("Codertocat", "User", "@frognano-app go"), []func(map[string]any){action("edited")}, "ignored"},
		{"Request", onIssue("Codertocat", "User", "Hi @Frognano-App base=dev attempts=2 -- keep the API\r\nas it is"), nil, "queued"},
		{"WhileActive", onIssue("Codertocat", "User", "@frognano-app again"), nil, "already_active"},
		{"Stop", onIssue("Codertocat", "User", "@frognano-app stop!"), nil, "stop_requested"},
	} {
		code, status := send(tt.edit, tt.extra...)
		if status != tt.status || (status == "ignored") != (code == http.StatusAccepted) {
			t.Errorf("%s: %d %s, want %s", tt.name, code, status, tt.status)
		}
	}
	var kind, trigger, request, url, labeler, base string
	var attempts, issue, runs int
	if err := b.pool.QueryRow(context.Background(), `SELECT kind, trigger, request, request_url, labeler, issue,
			coalesce(asked_base, ''), coalesce(asked_attempts, 0), (SELECT count(*) FROM runs) FROM runs ORDER BY id LIMIT 1`).Scan(
		&kind, &trigger, &request, &url, &labeler, &issue, &base, &attempts, &runs); err != nil {
		t.Fatal(err)
	}
	if kind != "issue" || trigger != "mention" || request != "base=dev attempts=2 -- keep the API\nas it is" ||
		labeler != "Codertocat" || issue != 1 || base != "dev" || attempts != 2 || runs != 1 ||
		url != "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400" {
		t.Errorf("run = %s %s %q %s %s %d %q %d (%d runs)", kind, trigger, request, url, labeler, issue, base, attempts, runs)
	}
	// The mention while the run was active is answered with that run, by a job of its own.
	var replies int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_active_reply'
		AND args->>'requester' = 'Codertocat' AND (args->>'issue')::int = 1
		AND (args->>'run_id')::bigint = (SELECT min(id) FROM runs)`).Scan(&replies); err != nil || replies != 1 {
		t.Errorf("active-run replies %d, %v", replies, err)
	}
	var stops int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_stop'
		AND args->>'requester' = 'Codertocat' AND (args->>'pr')::int = 1 AND (args->>'on_issue')::boolean`).Scan(&stops); err != nil || stops != 1 {
		t.Errorf("stop jobs on the issue %d, %v", stops, err)
	}
}

// TestWebhookMentionWithABadOptionQueuesTheRequestUnparsed: an option that does not parse is
// not dropped nor guessed at: the run carries the request as written, without options, for the
// worker to answer with what is wrong once it has checked the author.
func TestWebhookMentionWithABadOptionQueuesTheRequestUnparsed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw := fixture(t, "issue_comment/created.payload.json", installation(5), onIssue("Codertocat", "User", "@frognano-app atempts=3 fix it"))
	if st := decodeResponse(t, b.send(t, "issue_comment", raw)).Status; st != "queued" {
		t.Fatalf("status %s", st)
	}
	var request string
	var asked bool
	if err := b.pool.QueryRow(context.Background(), `SELECT request, asked_base IS NOT NULL OR asked_attempts IS NOT NULL OR asked_model IS NOT NULL FROM runs`).Scan(&request, &asked); err != nil {
		t.Fatal(err)
	}
	if request != "atempts=3 fix it" || asked {
		t.Errorf("request %q, asked %v", request, asked)
	}
}
