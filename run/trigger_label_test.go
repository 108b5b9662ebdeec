package run_test

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/settings"
)

// TestTriggerLabelCheckedBeforeAnythingIsPosted: a label's run whose label is not the
// repository's trigger label ends quietly before it writes anything; one that was admitted
// (its status comment posted) and is retried after the settings named another label is not
// ended quietly on its retry, which would leave its comment saying that it works.
func TestTriggerLabelCheckedBeforeAnythingIsPosted(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Files = map[string]string{settings.Path: "label: ai-fix\n"}
	id := p.Request(t, runtest.Request{Issue: 7, TriggerLabel: "frognano"})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	p.RequireState(t, id, run.StateSkipped)
	if c := p.Repo.Comments(); len(c) != 0 {
		t.Fatalf("comments %q for a label that is not the trigger label, want none", c)
	}

	q := runtest.New(t)
	q.Repo.Files = map[string]string{settings.Path: "label: ai-fix\n"}
	q.Repo.FailNext("Clone", runtest.Flaky("cloning"))
	id = q.Request(t, runtest.Request{Issue: 7, TriggerLabel: "AI-Fix"})
	if r := q.Work(t, id, 1); r.Completed() {
		t.Fatalf("Work completed despite the failed clone: %v", r)
	}
	if c := q.Repo.Comments(); len(c) != 1 {
		t.Fatalf("comments %q after the first attempt, want the status comment", c)
	}
	q.Repo.Files = map[string]string{settings.Path: "label: bot-fix\n"} // changed between the attempts
	if r := q.Work(t, id, 2); !r.Completed() {
		t.Fatal(r)
	}
	if row := q.Row(t, id); row.State == run.StateSkipped {
		t.Errorf("the admitted run ended %s (%s) on its retry; its status comment says:\n%s", row.State, row.ExitReason, strings.Join(q.Repo.Comments(), "\n"))
	}
}
