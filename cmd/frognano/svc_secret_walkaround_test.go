package main

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestServiceRefusesASecretAtAnAllowListedPath is issue 28 through the whole service (real
// PostgreSQL and Docker, the fake GitHub): asked to fix average(), the scripted model also
// writes a working token into the @octokit/auth-token README, a path one of gitleaks' default
// rules allow-lists for itself (testdata/hostile/svc-secret-allowlisted-path.json). Before,
// the check obeyed that allow-list: the branch and the draft pull request held the token. Now
// the patch is refused: no branch, no pull request, the status comment lists the finding as a
// table row (rule, file, line), and the value is in no comment, row of the database or line
// of the service's log.
func TestServiceRefusesASecretAtAnAllowListedPath(t *testing.T) {
	t.Parallel()
	token := ghToken(t, "ghp")
	e := svcSetupScript(t, scriptWith(t, "hostile", "svc-secret-allowlisted-path.json", map[string]string{"GITHUB_PAT": token}))
	e.env["FROGNANO_SECRETS"] = "block"
	p := e.start()
	id := e.queueRun(p)
	row := e.waitState(id, svcRunWait, "failed")
	e.waitNoContainers(time.Minute)

	if br := e.gh.Branch(e.repo, svcBranch); br != nil || len(e.gh.PRs(e.repo)) != 0 {
		t.Fatalf("the patch was published: branch %v, %d pull requests", br != nil, len(e.gh.PRs(e.repo)))
	}
	svcWait(t, svcRunWait, "the status comment to list the finding", func() (bool, string) {
		body := e.statusBody()
		return strings.Contains(body, "| `github-pat` | `@octokit/auth-token/README.md` | 3 | **nothing** |") &&
			strings.Contains(body, "**The patch was refused:**"), body
	})
	if err := p.stop(); err != nil { // flush the shutdown's log lines too
		t.Fatal(err)
	}
	if !strings.Contains(svcRequestsRaw(e), token) {
		t.Fatal("the model never wrote the token: the attack did not happen")
	}
	var comments strings.Builder
	for _, c := range e.gh.Comments(e.repo, svcIssue) {
		comments.WriteString(c.Body + strings.Join(c.History, "\n"))
	}
	for name, hay := range map[string]string{
		"the database": e.dump(t), "the comments": comments.String(), "the service log": e.logs.String(),
		"the check runs": fmt.Sprint(e.gh.CheckRuns(e.repo)), "the run's report": row.Report,
	} {
		if strings.Contains(hay, token) || strings.Contains(hay, hex.EncodeToString([]byte(token))) {
			t.Errorf("%s holds the token", name)
		}
	}
}
