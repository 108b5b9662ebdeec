package server

import (
	"context"
	"net/http"
	"testing"
)

// TestHiddenMentionAsksNothing: a mention GitHub neither shows nor notifies asks for nothing, on
// an issue and on a pull request, in a comment, a review or a line comment: one in an HTML
// comment (before, only an issue's comment was read without its hidden text: a pull request's
// comment, review or line comment with `<!-- @APP ... -->` queued a follow-up), and a name that
// reads as the App's only once an invisible character is dropped (`@frognano<U+200B>-app`, next
// to a hidden real one: before, that queued a run on an issue and on a pull request). A stop
// after hidden text stops.
func TestHiddenMentionAsksNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := commentSender(t, b)
	hidden := map[string]string{
		"HTMLComment":         "thanks <!-- @" + testSlug + " do this -->",
		"UnterminatedComment": "thanks <!-- @" + testSlug + " do this",
		"InvisibleInTheName":  "<!-- @" + testSlug + " --> @frognano\u200b-app do this",
		"JoinerInTheName":     "<!-- @" + testSlug + " --> @frog\u200dnano-app do this",
		"IndentedCode":        "to stop it, write\n\n    @" + testSlug + " stop\n",
		"LinkText":            "[@" + testSlug + " do this](https://example.com)",
		"ImageAlt":            "<img alt=\"@" + testSlug + " do this\" src=\"x.png\">",
	}
	for name, body := range hidden {
		if code, status := send(onIssue("Codertocat", "User", body)); status != "ignored" || code != http.StatusAccepted {
			t.Errorf("issue comment %s: %d %s, want ignored", name, code, status)
		}
		if code, status := send(onPR("Codertocat", "User", body)); status != "ignored" || code != http.StatusAccepted {
			t.Errorf("pull request comment %s: %d %s, want ignored", name, code, status)
		}
		rec := b.send(t, "pull_request_review", fixture(t, "pull_request_review/submitted.payload.json",
			installation(5), reviewed("commented", body, "changes", "Codertocat", "User")))
		if got := decodeResponse(t, rec).Status; got != "ignored" {
			t.Errorf("review %s: %d %s, want ignored", name, rec.Code, got)
		}
		rec = b.send(t, "pull_request_review_comment", fixture(t, "pull_request_review_comment/created.payload.json",
			lineComment(body, "changes", "Codertocat", "User")))
		if got := decodeResponse(t, rec).Status; got != "ignored" {
			t.Errorf("line comment %s: %d %s, want ignored", name, rec.Code, got)
		}
	}
	var runs, jobs int
	if err := b.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM river_job)`).Scan(&runs, &jobs); err != nil || runs != 0 || jobs != 0 {
		t.Fatalf("hidden mentions made %d runs and %d jobs (%v)", runs, jobs, err)
	}
	// The same texts with the mention shown ask; a stop after a hidden note stops.
	if _, status := send(onPR("Codertocat", "User", "<!-- note --> @"+testSlug+" stop")); status != "stop_requested" {
		t.Errorf("stop after a hidden note: %s", status)
	}
	if _, status := send(onPR("Codertocat", "User", "thanks <!-- x --> @"+testSlug+" do this")); status != "queued" {
		t.Errorf("a shown mention after a hidden note: %s", status)
	}
	if _, status := send(onIssue("Codertocat", "User", "@frognano-app\u200b do this")); status != "queued" {
		t.Errorf("a shown mention followed by an invisible character: %s", status)
	}
}
