package run_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
)

// bigResult is a finished run whose transcript is far over GitHub's limit, with a secret
// in its observations that the redaction replaces.
func bigResult() *runner.Result {
	lr := &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "Done."}
	for i := 0; i < 400; i++ {
		out := strings.Repeat("ghs_"+strings.Repeat("A", 36)+" é ", 30)
		lr.Steps = append(lr.Steps, leaf.Step{Index: i,
			Assistant:    leaf.Message{Role: "assistant", ToolCalls: []leaf.ToolCall{{ID: "c", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command": "cat big | tail -n 1"}`}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: out}}})
	}
	return &runner.Result{RunID: "run-1", Model: "m", BaseCommit: "abc", Leaf: lr,
		Patch: &patch.Checked{Diff: []byte("diff"), Files: []patch.File{{OldPath: "a.go", NewPath: "a.go", Status: "modified", Added: 1, Deleted: 1}}}}
}

// The body the renderer made is the body GitHub gets: no second cut drops the closing
// </details> or the note that says the transcript was cut (a 65,512-character body used
// to be cut again at 60,000 bytes).
func TestPublishesTheRenderedBodyUncut(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	out, err := run.OutcomeOf(bigResult(), run.RunSpec{Issue: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.PRBody); n <= 60000 {
		t.Fatalf("rendered body has %d bytes; the test needs one over the old 60,000-byte cut", n)
	}
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.PRBody = out.PRBody
		return o, nil
	})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	if len(p.Repo.Publishes()) != 1 {
		t.Fatalf("%d publishes", len(p.Repo.Publishes()))
	}
	body := p.Repo.Publishes()[0].Body
	if body != out.PRBody {
		t.Errorf("published body (%d bytes) is not the rendered one (%d bytes)", len(body), len(out.PRBody))
	}
	if n := utf8.RuneCountInString(body); n > report.GitHubBodyLimit {
		t.Errorf("published body has %d characters, over GitHub's limit", n)
	}
	if !strings.HasSuffix(body, "</details>\n\n\nFixes #7") || !strings.Contains(body, "The transcript was cut here") {
		t.Errorf("published body lacks the closed transcript, the cut note or the Fixes line: ...%q", body[len(body)-300:])
	}
	if strings.Contains(body, "ghs_") {
		t.Error("a token is left in the body")
	}
	t.Logf("published body: %d bytes, %d characters", len(body), utf8.RuneCountInString(body))
}
