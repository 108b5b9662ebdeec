package main

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestServiceAttempts: with FROGNANO_ATTEMPTS=2 the worker runs two attempts against one
// model URL (one fixes, one does not, whichever attempt each lands on) and publishes one draft
// PR with the fixing patch, whose body has the attempts table.
func TestServiceAttempts(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	wrong := leaftest.NewServer(t, leaftest.LoadModel(t, "attempt-wrong-fix.json"))
	e.env["FROGNANO_MODEL_URL"] = leaftest.NewRouter(t, nil, e.model, wrong).URL
	e.env["FROGNANO_ATTEMPTS"] = "2"
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "succeeded")
	head := e.gh.Branch(e.repo, svcBranch)
	if head == nil {
		t.Fatalf("branch %s was not pushed", svcBranch)
	}
	if got := head.Files["stats/basic.py"]; !strings.Contains(got, "return total(xs) / len(xs)\n") {
		t.Errorf("stats/basic.py on %s is not the fix:\n%s", svcBranch, got)
	}
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 {
		t.Fatalf("%d PRs, want 1", len(prs))
	}
	for _, want := range []string{"## Attempts", "2 independent attempts ran", "**chosen**", "fixes every test that failed before and breaks none", "len(xs) + 1", "transcript</summary>"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, svcTail(prs[0].Body, 4000))
		}
	}
	e.waitNoContainers(30 * time.Second)
}
