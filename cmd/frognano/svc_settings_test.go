package main

import (
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
