package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	runs "github.com/frognano/frognano/run"
)

// TestServiceSettingsFile is issue 30's settings file through the real service, the fake
// GitHub serving both files through its contents API: an invalid repository file stops the
// run before any clone or model call, with one comment naming the file, the line and the
// problem; once fixed, the organisation's defaults (its .github repository: admins only, and
// stats/ protected) apply under the repository's (writers may start runs), so the writer's run
// goes ahead, and its patch, which changes stats/basic.py, is not published.
func TestServiceSettingsFile(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	org := e.gh.AddRepo(svcOwner, ".github", map[string]string{".github/frognano.yml": "permission: admin\nprotected_paths: [\"stats/**\"]\n"})
	e.gh.AddInstallation(svcInstallationID, org)
	e.gh.PushCommit(e.repo, "main", ".github/frognano.yml", "permission: write\ncolour: red\n", "frognano settings")
	p := e.start()

	first := e.queueRun(p)
	row := e.waitState(first, svcRunWait, "skipped")
	if row.ExitReason != runs.ExitSettingsInvalid {
		t.Errorf("first run ended as %q, want %s", row.ExitReason, runs.ExitSettingsInvalid)
	}
	if body := e.onlyComment().Body; !strings.Contains(body, "`.github/frognano.yml:2:1: unknown key \"colour\"") {
		t.Errorf("the comment does not name the file's line 2:\n%s", body)
	}
	if n := e.gh.CountRequests("*", "/*/*.git/info/refs"); n != 0 {
		t.Errorf("%d git requests: the invalid settings must stop the run before the clone", n)
	}

	e.gh.PushCommit(e.repo, "main", ".github/frognano.yml", "permission: write\n", "fix the settings")
	second := e.queueRun(p)
	row = e.waitState(second, svcRunWait, "failed")
	if row.ExitReason != runs.ExitProtectedPath {
		t.Errorf("second run ended as %q (%s), want %s", row.ExitReason, row.Error, runs.ExitProtectedPath)
	}
	if e.gh.Branch(e.repo, svcBranch) != nil || len(e.gh.PRs(e.repo)) != 0 {
		t.Error("a branch or pull request exists for a patch that changes a protected path")
	}
	cs := e.gh.Comments(e.repo, svcIssue)
	svcWait(t, svcRunWait, "the status comment to name the protected path", func() (bool, string) {
		cs = e.gh.Comments(e.repo, svcIssue)
		last := cs[len(cs)-1].Body
		return strings.Contains(last, "it changes `stats/basic.py`, which the repository's .github/frognano.yml protects (`stats/**`)"), last
	})
	if n := e.gh.CountRequests("*", "/*/*.git/info/refs"); n == 0 {
		t.Error("no git request seen for the second run's clone: the first run's count proves nothing")
	}
	if len(cs) != 2 {
		t.Errorf("%d comments, want the invalid settings' and the second run's status", len(cs))
	}
	e.waitNoContainers(svcRunWait)
}

// TestServiceSettingsTriggerLabel: a repository whose settings say `label: ai-fix` is started
// by that label and not by the operator's. The operator's label, on a repository whose
// settings were never read, starts a run that reads them first and ends quietly (nothing
// posted, no clone); the repository's label is then known, so it starts a run at once, which
// works as any; and the operator's label is then ignored by the server.
func TestServiceSettingsTriggerLabel(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.gh.PushCommit(e.repo, "main", ".github/frognano.yml", "label: ai-fix\n", "frognano settings")
	p := e.start()

	first := e.queueRun(p) // the operator's label: the settings were never read
	row := e.waitState(first, svcRunWait, "skipped")
	if row.ExitReason != runs.ExitNotTriggerLabel {
		t.Errorf("the operator's label's run ended as %q (%s), want %s", row.ExitReason, row.Error, runs.ExitNotTriggerLabel)
	}
	if cs := e.gh.Comments(e.repo, svcIssue); len(cs) != 0 {
		t.Errorf("%d comments for a label that is not the repository's trigger label: %q", len(cs), cs[0].Body)
	}
	if n := e.gh.CountRequests("*", "/*/*.git/info/refs"); n != 0 {
		t.Errorf("%d git requests for a run that should end before its clone", n)
	}

	ans := e.deliver(p, "labeled", "AI-Fix", svcMaintainer)
	if ans.Status != "queued" || len(ans.RunIDs) != 1 {
		t.Fatalf("the repository's label: answer %+v, want one queued run", ans)
	}
	row = e.waitState(ans.RunIDs[0], svcRunWait, "succeeded")
	if row.PRNumber == 0 {
		t.Errorf("the repository's label's run opened no pull request (%s)", row.Error)
	}
	var triggerLabel string
	if err := e.db.QueryRow(context.Background(), `SELECT trigger_label FROM runs WHERE id = $1`, ans.RunIDs[0]).Scan(&triggerLabel); err != nil || triggerLabel != "AI-Fix" {
		t.Errorf("trigger_label %q (%v), want AI-Fix", triggerLabel, err)
	}

	status, body := e.eventStatus(p, "issues", "issues/labeled.payload.json", func(m map[string]any) {
		m["issue"].(map[string]any)["number"] = svcIssue + 1
		m["label"].(map[string]any)["name"] = "frognano"
	})
	if status != http.StatusAccepted || !strings.Contains(string(body), `"ignored"`) {
		t.Errorf("the operator's label once the repository's is known: %d %s, want 202 ignored", status, body)
	}
	e.waitNoContainers(svcRunWait)
}

// TestServiceSettingsTriggerLabelChecked: on a repository whose settings were never read, a
// label that is not the operator's is checked by a job that reads them; when they name it, the
// run starts (and the delivery is recorded then); another label starts nothing.
func TestServiceSettingsTriggerLabelChecked(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.gh.PushCommit(e.repo, "main", ".github/frognano.yml", "label: ai-fix\n", "frognano settings")
	p := e.start()
	label := func(name string, issue int) (int, []byte) {
		return e.eventStatus(p, "issues", "issues/labeled.payload.json", func(m map[string]any) {
			m["issue"].(map[string]any)["number"] = issue
			m["label"].(map[string]any)["name"] = name
			m["sender"].(map[string]any)["login"] = svcMaintainer
		})
	}
	if status, body := label("bug", svcIssue+1); status != http.StatusAccepted || !strings.Contains(string(body), `"label_check"`) {
		t.Fatalf("another label on a repository never read: %d %s, want 202 label_check", status, body)
	}
	// The check of "bug" reads the settings: from then on the server knows; wait for it.
	svcWait(t, svcRunWait, "the label check to read the settings", func() (bool, string) {
		var label string
		err := e.db.QueryRow(context.Background(), `SELECT label FROM repo_labels WHERE repo_id = $1`, e.repo.ID).Scan(&label)
		return err == nil && label == "ai-fix", fmt.Sprintf("%q %v", label, err)
	})
	var n int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d runs (%v) after a label that is not the trigger label", n, err)
	}
	// Forget what was read, as if long ago: the repository's label is checked, and runs.
	if _, err := e.db.Exec(context.Background(), `UPDATE repo_labels SET read_at = now() - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	if status, body := label("ai-fix", svcIssue); status != http.StatusAccepted || !strings.Contains(string(body), `"label_check"`) {
		t.Fatalf("the repository's label, settings read a day ago: %d %s, want 202 label_check", status, body)
	}
	var id int64
	svcWait(t, svcRunWait, "the checked label's run", func() (bool, string) {
		err := e.db.QueryRow(context.Background(), `SELECT id FROM runs WHERE issue = $1 AND trigger_label = 'ai-fix'`, svcIssue).Scan(&id)
		return err == nil, fmt.Sprint(err)
	})
	if row := e.waitState(id, svcRunWait, "succeeded"); row.PRNumber == 0 {
		t.Errorf("the checked label's run opened no pull request (%s)", row.Error)
	}
	var deliveries int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE run_id = $1`, id).Scan(&deliveries); err != nil || deliveries != 1 {
		t.Errorf("%d deliveries (%v) recorded for the checked label's run, want 1", deliveries, err)
	}
	e.waitNoContainers(svcRunWait)
}
