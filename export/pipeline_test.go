package export_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/internal/secrettest"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
)

// TestExportOfWhatThePipelineStored: a run worked through run.Pipeline (its scripted agent's
// result turned into the stored outcome by run.OutcomeOf, as the service does) exports in both
// formats (the agent made no patch: the run failed, with no pull request): it reads back, its calls pair up with their answers, Leaf's tools come out in the
// model's order although PostgreSQL's jsonb reordered them, and the GitHub token an
// observation held is not in it.
func TestExportOfWhatThePipelineStored(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	token := "ghs_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
	p.Runner.Set(func(_ context.Context, spec runs.RunSpec, _ func(runs.Progress)) (*runs.Outcome, error) {
		obs := "Exit code: 0\nSTDOUT:\nGITHUB_TOKEN=" + token + "\nSTDERR:\n"
		call := leaf.ToolCall{ID: "call_0", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"env"}`}}
		final := "Fixed."
		task := spec.Task
		lr := &leaf.Result{
			Messages: []leaf.Message{{Role: "system", Content: ptr(leaf.SystemPrompt)}, {Role: "user", Content: &task},
				{Role: "assistant", ToolCalls: []leaf.ToolCall{call}}, {Role: "tool", ToolCallID: "call_0", Content: &obs},
				{Role: "assistant", Content: &final}},
			Steps: []leaf.Step{{Index: 0, Assistant: leaf.Message{Role: "assistant", ToolCalls: []leaf.ToolCall{call}}, Observations: []leaf.Observation{{Tool: "Bash", Observation: obs}}},
				{Index: 1, Assistant: leaf.Message{Role: "assistant", Content: &final}, Observations: []leaf.Observation{}}},
			NSteps: 2, ExitReason: leaf.ExitAgent, FinalMessage: final, Elapsed: time.Second,
		}
		res := &runner.Result{RunID: "run-" + itoa(int(spec.RunID)), InstanceID: "octo/pager#1", Task: task, StartedAt: time.Now(), Leaf: lr}
		return runs.OutcomeOf(res, spec)
	})
	id := p.Label(t, 1)
	if a := p.Work(t, id, 1); !a.Completed() {
		t.Fatalf("the run: %s", a)
	}
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		out := filepath.Join(t.TempDir(), "runs.jsonl")
		sum, err := export.Run(context.Background(), p.Pool, export.Options{Repos: repos("octo/pager"), Format: format, Out: out})
		if err != nil || sum.Written != 1 {
			t.Fatalf("%s: %v, %+v", format, err, sum)
		}
		e := readBack(t, out, format)
		if l := e.labels[0]; l.RunID != id || l.State != "failed" || l.ExitReason != "agent" || l.Steps != 2 || l.Issue == nil || *l.Issue != 1 {
			t.Errorf("%s: labels %+v", format, e.labels[0])
		}
		if !strings.Contains(string(e.records[0]), `"tools":`+string(mustJSONValue(leaf.ToolSchemas()))) {
			t.Errorf("%s: Leaf's tools are not in the model's order", format)
		}
		noValue(t, out, map[string]string{"the GitHub token": token})
	}
}
