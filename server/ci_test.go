package server

import (
	"context"
	"net/http"
	"testing"
)

func suite(conclusion, branch, appSlug string) func(map[string]any) {
	return func(m map[string]any) {
		cs := m["check_suite"].(map[string]any)
		cs["conclusion"], cs["head_branch"] = conclusion, branch
		cs["app"].(map[string]any)["slug"] = appSlug
	}
}

// TestWebhookFailedCheckSuiteQueuesACIFollowUp: another App's failed check suite on a
// frognano branch queues a CI follow-up of its pull request; success, frognano's own suite
// and other branches are ignored.
func TestWebhookFailedCheckSuiteQueuesACIFollowUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tt := range []struct {
		name, conclusion, branch, app, status string
	}{
		{"Success", "success", "frognano/issue-1", "github-actions", "ignored"},
		{"OwnSuite", "failure", "frognano/issue-1", testSlug, "ignored"},
		{"OtherBranch", "failure", "changes", "github-actions", "ignored"},
		{"Failure", "failure", "frognano/issue-1", "github-actions", "queued"},
	} {
		raw := fixture(t, "check_suite/completed.payload.json", installation(5), suite(tt.conclusion, tt.branch, tt.app))
		rec := b.send(t, "check_suite", raw)
		if got := decodeResponse(t, rec).Status; got != tt.status || (got == "ignored") != (rec.Code == http.StatusAccepted) {
			t.Errorf("%s: %d %s, want %s", tt.name, rec.Code, got, tt.status)
		}
	}
	var kind, sha, request string
	var issue int
	var source int64
	if err := b.pool.QueryRow(context.Background(), `SELECT kind, ci_sha, request, issue, source_id FROM runs`).Scan(&kind, &sha, &request, &issue, &source); err != nil {
		t.Fatal(err)
	}
	if kind != "ci" || sha != "ec26c3e57ca3a959ca5aad62de7213c562f8c821" || issue != 2 || source != 118578147 {
		t.Errorf("run = %s %s %d %q, source %d", kind, sha, issue, request, source)
	}
}
