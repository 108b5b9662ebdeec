package run

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

func TestStepEventRedactsAndCaps(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("A", 36)
	long := strings.Repeat("x", eventTextCap+100)
	e := NewStepEvent(0, leaf.Step{Index: 3, Assistant: leaf.Message{Role: "assistant",
		ToolCalls: []leaf.ToolCall{{Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"echo ` + token + `"}`}}}},
		Observations: []leaf.Observation{{Tool: "Bash", Observation: long}}, ModelTime: 2 * time.Second})
	if strings.Contains(e.Calls[0].Arguments, token) || !strings.Contains(e.Calls[0].Arguments, githubapp.Redacted) {
		t.Errorf("arguments not redacted: %q", e.Calls[0].Arguments)
	}
	if len(e.Observations[0].Text) > eventTextCap {
		t.Errorf("observation kept %d bytes, cap %d", len(e.Observations[0].Text), eventTextCap)
	}
	if e.Index != 3 || e.ModelMS != 2000 {
		t.Errorf("step = index %d, model %d ms", e.Index, e.ModelMS)
	}
}

func TestTestsEventOrdersChangesFirst(t *testing.T) {
	t.Parallel()
	before := &runner.TestRun{Outcome: verify.Outcome{Command: "go test ./...", ExitCode: 1,
		Tests: map[string]verify.Status{"pkg/TestA": verify.Fail, "pkg/TestB": verify.Pass, "pkg/TestC": verify.Pass}}}
	after := &runner.TestRun{Outcome: verify.Outcome{Command: "go test ./...", ExitCode: 1,
		Tests: map[string]verify.Status{"pkg/TestA": verify.Pass, "pkg/TestB": verify.Pass, "pkg/TestC": verify.Fail}}}
	res := &runner.Result{TestsBefore: before, TestsAfter: after,
		Comparison: &verify.Comparison{PerTest: true, Fixed: []string{"pkg/TestA"}, Broken: []string{"pkg/TestC"}}}
	e := testsEvent(res)
	if e.Before.Failed != 1 || e.Before.Passed != 2 || e.After.Failed != 1 {
		t.Errorf("counts: before %+v after %+v", e.Before, e.After)
	}
	var got []string
	for _, r := range e.Tests {
		got = append(got, r.Name+":"+r.Change)
	}
	if strings.Join(got, ",") != "pkg/TestC:broken,pkg/TestA:fixed,pkg/TestB:" {
		t.Errorf("rows = %v", got)
	}
}
