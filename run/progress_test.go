package run

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestStatusSaysTheRunWaitsForTheModel: the running status comment says that the run waits
// for the model server above the latest step (or alone, before the first step), and says
// nothing of it once requests flow.
func TestStatusSaysTheRunWaitsForTheModel(t *testing.T) {
	t.Parallel()
	step := Progress{Step: 3, Elapsed: 12 * time.Second, Calls: []Call{{"Bash", `{"command": "pytest -q"}`}}}
	for _, tt := range []struct {
		name    string
		p       Progress
		want    []string
		wantNot []string
	}{
		{"BeforeTheFirstStep", Progress{Waiting: "429, retrying in 12 s"},
			[]string{"is working on this issue.\n\n⏳ Waiting for the model server: 429, retrying in 12 s."}, []string{"Step"}},
		{"WithAStep", func() Progress { p := step; p.Waiting = "no answer for 30 s"; return p }(),
			[]string{"⏳ Waiting for the model server: no answer for 30 s.\n\nStep 3 (12s elapsed):", "pytest -q"}, nil},
		{"Flowing", step, []string{"Step 3 (12s elapsed):"}, []string{"Waiting", "⏳"}},
		{"FlowingBeforeTheFirstStep", Progress{}, []string{"is working on this issue."}, []string{"Waiting", "Step", "final answer"}},
		{"ForASandbox", func() Progress {
			p := step
			p.SandboxWait = "for the tests before (2 of 2 in use on this worker)"
			return p
		}(),
			[]string{"⏳ Waiting for a free sandbox for the tests before (2 of 2 in use on this worker).\n\nStep 3 (12s elapsed):"}, []string{"model server"}},
		{"ForASandboxAndTheModel", Progress{SandboxWait: "for the agent (1 of 1 in use on this worker)", Waiting: "429, retrying in 12 s"},
			[]string{"is working on this issue.\n\n⏳ Waiting for a free sandbox for the agent (1 of 1 in use on this worker).\n\n⏳ Waiting for the model server: 429, retrying in 12 s."}, []string{"Step"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.p
			body := RenderStatus(Status{RunID: 9, State: StateRunning, Progress: &p})
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("comment lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("comment has %q:\n%s", w, body)
				}
			}
			if strings.HasSuffix(body, "\n") {
				t.Errorf("comment ends with a blank line:\n%q", body)
			}
		})
	}
}

// TestProgressOfAttempts: the progress of several attempts keeps the furthest step, says the
// run waits while any attempt waits (the latest wait, and how many), and clears the wait once
// every waiting attempt's requests flow again; a clear without a wait sends nothing.
func TestProgressOfAttempts(t *testing.T) {
	t.Parallel()
	var sent []Progress
	p := &progressOf{send: func(pr Progress) { sent = append(sent, pr) }}
	last := func() Progress { return sent[len(sent)-1] }
	stepOf := func(i int) leaf.Step {
		return leaf.Step{Index: i, Assistant: leaf.Message{ToolCalls: []leaf.ToolCall{{Function: leaf.FunctionCall{Name: "Read", Arguments: `{"file_path": "a.py"}`}}}}}
	}

	p.wait(1, leaf.ModelWait{})
	if len(sent) != 0 {
		t.Fatalf("a clear without a wait sent %+v", sent)
	}
	p.wait(2, leaf.ModelWait{Status: 503, RetryIn: 3 * time.Second})
	if got := last(); got.Waiting != "503, retrying in 3 s" || got.Step != 0 {
		t.Errorf("after attempt 2's 503: %+v", got)
	}
	p.step(stepOf(1))
	p.step(stepOf(0)) // behind: not shown
	if got := last(); got.Step != 2 || got.Waiting != "503, retrying in 3 s" || len(sent) != 2 {
		t.Errorf("a step while attempt 2 waits: %+v (%d sent)", got, len(sent))
	}
	p.wait(3, leaf.ModelWait{Status: 429, RetryIn: 12 * time.Second})
	if got := last(); got.Waiting != "429, retrying in 12 s (2 attempts are waiting)" || got.Step != 2 {
		t.Errorf("two attempts waiting: %+v", got)
	}
	p.wait(3, leaf.ModelWait{})
	if got := last(); got.Waiting != "503, retrying in 3 s" {
		t.Errorf("attempt 3 flows again: %+v", got)
	}
	p.wait(2, leaf.ModelWait{})
	if got := last(); got.Waiting != "" || got.Step != 2 || len(got.Calls) != 1 {
		t.Errorf("every attempt flows again: %+v", got)
	}
	(&progressOf{}).wait(1, leaf.ModelWait{Queued: true}) // no receiver: nothing happens
}

// TestProgressOfSandboxWaits: the progress says the run waits for a free sandbox while any of
// its sandboxes does (the latest wait, and how many wait), keeps the step and the model wait,
// and says it no more once every waiting sandbox has its slot; an end without a wait sends
// nothing.
func TestProgressOfSandboxWaits(t *testing.T) {
	t.Parallel()
	var sent []Progress
	p := &progressOf{send: func(pr Progress) { sent = append(sent, pr) }}
	last := func() Progress { return sent[len(sent)-1] }

	p.sandboxWait(1, sandbox.SlotWait{Purpose: "agent"})
	if len(sent) != 0 {
		t.Fatalf("an end without a wait sent %+v", sent)
	}
	p.step(leaf.Step{Index: 0})
	p.sandboxWait(1, sandbox.SlotWait{Purpose: "tests-before", InUse: 2, Cap: 2})
	if got := last(); got.SandboxWait != "for the tests before (2 of 2 in use on this worker)" || got.Step != 1 {
		t.Errorf("the tests before wait: %+v", got)
	}
	p.wait(1, leaf.ModelWait{Status: 503, RetryIn: 3 * time.Second})
	p.sandboxWait(2, sandbox.SlotWait{Purpose: "agent", InUse: 2, Cap: 2})
	if got := last(); got.SandboxWait != "for the agent (2 of 2 in use on this worker; 2 sandboxes of this run are waiting)" ||
		got.Waiting != "503, retrying in 3 s" {
		t.Errorf("two sandboxes waiting: %+v", got)
	}
	p.sandboxWait(2, sandbox.SlotWait{Purpose: "agent"})
	if got := last(); got.SandboxWait != "for the tests before (2 of 2 in use on this worker)" {
		t.Errorf("attempt 2's agent has its slot: %+v", got)
	}
	p.sandboxWait(1, sandbox.SlotWait{Purpose: "tests-before"})
	if got := last(); got.SandboxWait != "" || got.Waiting != "503, retrying in 3 s" || got.Step != 1 {
		t.Errorf("every sandbox has its slot: %+v", got)
	}
	(&progressOf{}).sandboxWait(1, sandbox.SlotWait{Purpose: "agent", InUse: 1, Cap: 1}) // no receiver: nothing happens
}
