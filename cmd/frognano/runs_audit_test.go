package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/migrations/dbtest"
	runs "github.com/frognano/frognano/run"
)

// TestRunsShowAuditOutcomes: `frognano runs show ID --audit` says of each write what became of
// it, and plainly when nobody knows: a write whose answer was lost is "unknown", with why,
// and a line under the table says to look on GitHub; one GitHub refused shows its status.
func TestRunsShowAuditOutcomes(t *testing.T) {
	t.Parallel()
	db := dbtest.New(t)
	ctx := context.Background()
	var schema string
	if err := db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler, state)
		VALUES ('integration:1', 'guid-audit', 5, 42, 'octo', 'pager', 7, 'maintainer', 'failed') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	st := runs.NewStore(db, nil)
	for _, e := range []githubapp.AuditEntry{
		{Action: "comment.created", Method: "POST", Path: "/repos/octo/pager/issues/7/comments", Status: 201, Outcome: githubapp.OutcomeDone,
			ObjectType: "comment", ObjectID: "1001", RequestID: "F00D:1:1"},
		{Action: "review.requested", Method: "POST", Path: "/repos/octo/pager/pulls/8/requested_reviewers", Status: 422,
			Outcome: githubapp.OutcomeRefused, Detail: "GitHub answered 422", ObjectType: "pull_request", ObjectID: "#8 @mallory", RequestID: "F00D:1:2"},
		{Action: "comment.edited", Method: "PATCH", Path: "/repos/octo/pager/issues/comments/1001", Outcome: githubapp.OutcomeUnknown,
			Detail: "cancelled while waiting for GitHub's answer", ObjectType: "comment", ObjectID: "1001"},
		{Action: "label.removed", Method: "DELETE", Path: "/repos/octo/pager/issues/7/labels/frognano", Status: 502,
			Outcome: githubapp.OutcomeUnknown, Detail: "GitHub answered 502, which can follow a write it made", ObjectType: "label", ObjectID: "#7 frognano"},
	} {
		e.RunID = id
		if err := st.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	env := envMap(map[string]string{"DATABASE_URL": svcDatabaseURL(t, schema)})
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"runs", "show", fmt.Sprint(id), "--audit"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("runs show --audit: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"OUTCOME", "comment 1001", "done (201)", "pull_request #8 @mallory", "refused (422)",
		"unknown: cancelled while waiting for GitHub's answer; it may have happened, look on GitHub",
		"label #7 frognano", "unknown (502): it may have happened; look on GitHub",
		"2 write(s) got no answer that says what became of them (outcome unknown): each may have happened; look at its object on GitHub."} {
		if !strings.Contains(out, w) {
			t.Errorf("runs show --audit lacks %q:\n%s", w, out)
		}
	}
}
