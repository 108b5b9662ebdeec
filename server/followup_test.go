package server

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/queue"
)

// TestFollowUpsNeedTheAppSlug: without the App's slug there is nothing to mention, so every
// event that could start a follow-up (a comment, a review, a line comment, CI failing) is
// answered ignored and stores nothing, even one that would queue a run with the slug.
func TestFollowUpsNeedTheAppSlug(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	qc, err := queue.NewClient(pool, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Intake: qc, Secret: testSecret, Label: testLabel, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{pool: pool, srv: srv}
	mentioned := "@" + testSlug + " please fix"
	for _, tt := range []struct{ event, fixture string }{
		{"issue_comment", "issue_comment/created.payload.json"},
		{"pull_request_review", "pull_request_review/submitted.payload.json"},
		{"pull_request_review_comment", "pull_request_review_comment/created.payload.json"},
		{"check_suite", "check_suite/completed.payload.json"},
	} {
		raw := fixture(t, tt.fixture, installation(5))
		if tt.event == "pull_request_review_comment" {
			raw = fixture(t, tt.fixture, installation(5), lineComment(mentioned, "frognano/issue-1", "Codertocat", "User"))
		}
		rec := b.send(t, tt.event, raw)
		if got := decodeResponse(t, rec); rec.Code != http.StatusAccepted || got.Status != "ignored" {
			t.Errorf("%s: %d %s, want 202 ignored", tt.event, rec.Code, got.Status)
		}
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v, want nothing", c)
	}
	// With the slug, the same line comment queues a follow-up.
	withSlug := setup(t)
	raw := fixture(t, "pull_request_review_comment/created.payload.json", installation(5),
		lineComment(mentioned, "frognano/issue-1", "Codertocat", "User"))
	if got := decodeResponse(t, withSlug.send(t, "pull_request_review_comment", raw)); got.Status != "queued" {
		t.Errorf("with the slug: %s, want queued", got.Status)
	}
}
