package main

import (
	"strings"
	"testing"
)

// TestServiceWithoutChecksWrite is issue 18's first report through the real service: an
// installation made before check runs existed (contents, issues, pull requests: write;
// metadata: read; no checks) labels an issue. Before, the token request for checks: write got
// GitHub's 422 and nothing happened at all. Now the run opens its draft pull request with no
// check run, and its body and status comment say check runs are off, why and who can turn them
// on. Once the installation approves checks: write, the next run reports its check run, with
// the same service process (no restart).
func TestServiceWithoutChecksWrite(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage-twice.json")
	e.gh.SetInstallationPermissions(svcInstallationID, map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"})
	p := e.start()

	row := e.waitState(e.queueRun(p), svcRunWait, "succeeded")
	const notice = "Check runs are off: the App's installation has not granted `checks: write`"
	if !strings.Contains(row.PRBody, notice) || !strings.Contains(row.PRBody, "Fixes #1") {
		t.Errorf("the pull request body lacks the notice:\n%s", svcTail(row.PRBody, 1500))
	}
	if prs := e.gh.PRs(e.repo); len(prs) != 1 || !prs[0].Draft || !strings.Contains(prs[0].Body, notice) {
		t.Fatalf("pull requests on GitHub: %+v", prs)
	}
	if runs := e.gh.CheckRuns(e.repo); len(runs) != 0 {
		t.Errorf("check runs without checks: write: %v", runs)
	}
	svcWait(t, svcRunWait, "the final status comment", func() (bool, string) {
		body := e.onlyComment().Body
		return strings.Contains(body, "opened a draft pull request"), body
	})
	if body := e.onlyComment().Body; !strings.Contains(body, notice) {
		t.Errorf("the status comment lacks the notice:\n%s", body)
	}

	// The installation approves checks: write; a second issue is labelled.
	e.gh.SetInstallationPermissions(svcInstallationID, map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "checks": "write"})
	e.gh.AddIssue(e.repo, 2, "average() divides by the wrong count", "Again, on another issue.")
	ans := e.event(p, "issues", "issues/labeled.payload.json", func(m map[string]any) {
		m["issue"].(map[string]any)["number"] = 2
		m["label"].(map[string]any)["name"] = "frognano"
		m["sender"].(map[string]any)["login"] = svcMaintainer
	})
	if ans.Status != "queued" || len(ans.RunIDs) != 1 {
		t.Fatalf("second label: %+v", ans)
	}
	second := e.waitState(ans.RunIDs[0], svcRunWait, "succeeded")
	if strings.Contains(second.PRBody, notice) {
		t.Error("the notice is still there after checks: write was approved")
	}
	runs := e.gh.CheckRuns(e.repo)
	if len(runs) != 1 || runs[0]["name"] != "frognano / tests" {
		t.Errorf("check runs after approval: %v", runs)
	}
	e.waitNoContainers(svcRunWait)
}
