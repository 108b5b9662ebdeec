package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	runs "github.com/frognano/frognano/run"
)

// TestServicePushRefusedByRuleset is issue 18's refusal through the real service: a
// repository ruleset covers frognano's branches, so GitHub refuses to create frognano/issue-1
// ("Repository rule violations found"; since issue 22 the branch is made through the API, not
// pushed). Before, the push was retried as a network error, three times,
// and the run ended with "an infrastructure error". Now it ends after one push as
// github_refused, and the status comment, the run's record (`frognano runs show`, the run
// page) and the log give the same reason: GitHub's own lines and the setting to change.
func TestServicePushRefusedByRuleset(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.gh.RefusePushes(e.repo, githubtest.RefuseRuleset)
	p := e.start()

	id := e.queueRun(p)
	row := e.waitState(id, svcRunWait, "failed")
	if row.ExitReason != runs.ExitGitHubRefused || row.Attempts != 1 {
		t.Errorf("run ended as %q after %d attempts, want %s after one", row.ExitReason, row.Attempts, runs.ExitGitHubRefused)
	}
	for _, want := range []string{"GitHub refused the update of branch `frognano/issue-1`", "Repository rule violations found Cannot create ref due to creations being restricted.",
		"exclude `frognano/*` from the ruleset's target branches"} {
		if !strings.Contains(row.Error, want) {
			t.Errorf("the run's record lacks %q:\n%s", want, row.Error)
		}
	}
	if n := e.gh.CountRequests("POST", "/repos/*/*/git/refs"); n != 1 {
		t.Errorf("%d branch creations, want 1: a refusal is not retried", n)
	}
	if e.gh.Branch(e.repo, svcBranch) != nil || len(e.gh.PRs(e.repo)) != 0 {
		t.Error("a branch or pull request exists after the refused push")
	}
	svcWait(t, svcRunWait, "the status comment to give the reason", func() (bool, string) {
		body := e.onlyComment().Body
		return strings.Contains(body, row.Error), body
	})

	kept, err := runs.NewStore(e.db, nil).Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var shown bytes.Buffer
	if err := writeRunFacts(&shown, kept); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown.String(), "github_refused") || !strings.Contains(shown.String(), "Repository rule violations found") {
		t.Errorf("frognano runs show:\n%s", shown.String())
	}
	if logs := e.logs.String(); !strings.Contains(logs, "GitHub refused the run; it ends") {
		t.Errorf("the log does not say why the run ended:\n%s", svcTail(logs, 3000))
	}
}
