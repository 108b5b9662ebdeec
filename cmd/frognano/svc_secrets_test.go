package main

import (
	"strings"
	"testing"
	"time"
)

// TestServiceKeepsSecretsOutOfTheSandbox runs an agent that does what a prompt-injected model
// would: print its environment, every process's environment and .git/config. The service's
// own secrets (a canary, a GITHUB_TOKEN, the webhook secret, the App key) and every
// installation token the fake issued must appear nowhere: not in what the model saw, the
// trajectory, the runs row, the PR, the comments, the pushed commit or the service's log.
func TestServiceKeepsSecretsOutOfTheSandbox(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-canary.json")
	p := e.start()
	id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
	row := e.waitState(id, svcRunWait, "succeeded")
	e.waitNoContainers(30 * time.Second)
	if err := p.stop(); err != nil { // flush the shutdown's log lines too
		t.Fatal(err)
	}

	seen := svcRequestsRaw(e) // what the model saw: every observation of the sandbox
	pr := e.gh.PRs(e.repo)
	if len(pr) != 1 {
		t.Fatalf("%d PRs, want 1", len(pr))
	}
	head := e.gh.Branch(e.repo, svcBranch)
	var pushed strings.Builder
	pushed.WriteString(head.Message)
	for name, content := range head.Files {
		pushed.WriteString(name + "\n" + content)
	}
	var comments strings.Builder
	for _, c := range e.gh.Comments(e.repo, svcIssue) {
		comments.WriteString(c.Body + strings.Join(c.History, "\n"))
	}
	haystacks := map[string]string{
		"the model's requests": seen,
		"the trajectory":       string(row.Trajectory),
		"the run's report":     row.Report,
		"the run's PR body":    row.PRBody,
		"the run's summary":    row.Summary + row.Error,
		"the PR":               pr[0].Title + pr[0].Body,
		"the comments":         comments.String(),
		"the pushed commit":    pushed.String(),
		"the service log":      e.logs.String(),
	}

	// The attempt was real: the environment dump and .git/config reached the model and the
	// trajectory (else finding nothing would prove nothing).
	for _, want := range []string{"PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp", "[core]"} {
		if !strings.Contains(seen, want) || !strings.Contains(string(row.Trajectory), want) {
			t.Errorf("the sandbox's dump lacks %q: the probe did not run", want)
		}
	}
	if haystacks["the run's summary"] == "" { // a succeeded run may have none
		delete(haystacks, "the run's summary")
	}
	svcCheckNoSecret(t, e, haystacks)
}

// svcKeyLine returns a full base64 line from the middle of a PEM block.
func svcKeyLine(t *testing.T, pem string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(pem), "\n")
	if len(lines) < 5 {
		t.Fatalf("the App key has %d lines", len(lines))
	}
	return lines[len(lines)/2]
}
