package server

import (
	"context"
	"net/http"
	"testing"
)

func suite(conclusion, branch, appSlug string) func(map[string]any) {
	return suiteOf(conclusion, branch, appSlug, 29310)
}

// suiteOf is suite by an App of the given id.
func suiteOf(conclusion, branch, appSlug string, appID int64) func(map[string]any) {
	return func(m map[string]any) {
		cs := m["check_suite"].(map[string]any)
		cs["conclusion"], cs["head_branch"] = conclusion, branch
		cs["app"].(map[string]any)["slug"] = appSlug
		cs["app"].(map[string]any)["id"] = appID
	}
}

// frognano's own check suite is known by the App's id, not its slug: after frognano's App is
// renamed, its suites (new slug) are still its own, and another App that took the old slug is
// CI like any other.
func TestOwnCheckSuiteByAppID(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.AppID = 4242 })
	for _, tt := range []struct {
		name, slug string
		id         int64
		status     string
	}{
		{"OwnRenamed", "frognano-renamed", 4242, "ignored"},
		{"OldSlugTakenByAnother", testSlug, 5151, "queued"},
	} {
		raw := fixture(t, "check_suite/completed.payload.json", installation(5), suiteOf("failure", "frognano/issue-3", tt.slug, tt.id))
		if got := decodeResponse(t, b.send(t, "check_suite", raw)).Status; got != tt.status {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.status)
		}
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
