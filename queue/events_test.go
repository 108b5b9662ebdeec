package queue

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

func TestWorkerWritesRunEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.set(func(ctx context.Context, spec RunSpec, progress func(Progress)) (*Outcome, error) {
		// What AgentRunner writes as the agent moves, through the context's event log.
		ev := eventsFrom(ctx)
		ev.add(ctx, EventAgent, AgentEvent{Task: spec.Task})
		ev.add(ctx, EventStep, stepEvent(1, leaf.Step{Index: 0, Assistant: leaf.Message{Role: "assistant",
			ToolCalls: []leaf.ToolCall{{Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"ls"}`}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: "pager.go"}}}))
		return goodOutcome(), nil
	})
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	evs, err := ListRunEvents(context.Background(), b.pool, res.RunID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, ","); got != "attempt,agent,step,end" {
		t.Fatalf("event kinds = %s, want attempt,agent,step,end", got)
	}
	var step StepEvent
	if err := json.Unmarshal(evs[2].Data, &step); err != nil {
		t.Fatal(err)
	}
	if len(step.Calls) != 1 || step.Calls[0].Arguments != `{"command":"ls"}` || step.Observations[0].Text != "pager.go" {
		t.Errorf("step = %+v", step)
	}
	var end EndEvent
	if err := json.Unmarshal(evs[3].Data, &end); err != nil {
		t.Fatal(err)
	}
	if end.State != StateSucceeded || end.PRURL == "" {
		t.Errorf("end = %+v, want succeeded with the PR's URL", end)
	}
	// Paging: after the second event only the last two come.
	if rest, err := ListRunEvents(context.Background(), b.pool, res.RunID, evs[1].ID); err != nil || len(rest) != 2 {
		t.Errorf("events after %d: %d, %v", evs[1].ID, len(rest), err)
	}
}

func TestListRunsWhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := b.accept(t, 7)
	if r := b.work(t, done, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	queued := b.accept(t, 8)
	ctx := context.Background()
	tests := []struct {
		name string
		f    RunFilter
		want []int64
	}{
		{"All", RunFilter{Limit: 10}, []int64{queued.RunID, done.RunID}},
		{"Repository", RunFilter{Owner: "OCTO", Repo: "pager", Limit: 10}, []int64{queued.RunID, done.RunID}},
		{"OtherRepository", RunFilter{Owner: "octo", Repo: "other", Limit: 10}, nil},
		{"RepositoryID", RunFilter{RepoID: 42, Limit: 10}, []int64{queued.RunID, done.RunID}},
		{"OtherRepositoryID", RunFilter{RepoID: 43, Limit: 10}, nil},
		{"NameOfAnotherID", RunFilter{RepoID: 43, Owner: "octo", Repo: "pager", Limit: 10}, nil},
		{"State", RunFilter{State: StateSucceeded, Limit: 10}, []int64{done.RunID}},
		{"Limit", RunFilter{Limit: 1}, []int64{queued.RunID}},
	}
	for _, tt := range tests {
		got, err := ListRunsWhere(ctx, b.pool, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
			if r.RepoID != 42 {
				t.Errorf("%s: run %d has repository id %d, want 42", tt.name, r.ID, r.RepoID)
			}
		}
		if len(ids) != len(tt.want) || (len(ids) > 0 && ids[0] != tt.want[0]) {
			t.Errorf("%s: runs %v, want %v", tt.name, ids, tt.want)
		}
	}
	f, err := GetRunFacts(ctx, b.pool, done.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != KindIssue || f.ModelMS != 40000 || f.TestMS != 3000 {
		t.Errorf("facts = %+v", f)
	}
}

func TestStepEventRedactsAndCaps(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("A", 36)
	long := strings.Repeat("x", eventTextCap+100)
	e := stepEvent(0, leaf.Step{Index: 3, Assistant: leaf.Message{Role: "assistant",
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
