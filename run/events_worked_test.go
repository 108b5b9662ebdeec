package run_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner/leaf"
)

func TestWritesRunEvents(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		// What AgentRunner writes as the agent moves, through the context's event log.
		ev := run.EventsFrom(ctx)
		ev.Add(ctx, run.EventAgent, run.AgentEvent{Task: spec.Task})
		ev.Add(ctx, run.EventStep, run.NewStepEvent(1, leaf.Step{Index: 0, Assistant: leaf.Message{Role: "assistant",
			ToolCalls: []leaf.ToolCall{{Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"ls"}`}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: "pager.go"}}}))
		return runtest.GoodOutcome(), nil
	})
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	evs, err := run.NewStore(p.Pool, nil).Events(context.Background(), id, 0)
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
	var step run.StepEvent
	if err := json.Unmarshal(evs[2].Data, &step); err != nil {
		t.Fatal(err)
	}
	if len(step.Calls) != 1 || step.Calls[0].Arguments != `{"command":"ls"}` || step.Observations[0].Text != "pager.go" {
		t.Errorf("step = %+v", step)
	}
	var end run.EndEvent
	if err := json.Unmarshal(evs[3].Data, &end); err != nil {
		t.Fatal(err)
	}
	if end.State != run.StateSucceeded || end.PRURL == "" {
		t.Errorf("end = %+v, want succeeded with the PR's URL", end)
	}
	// Paging: after the second event only the last two come.
	if rest, err := run.NewStore(p.Pool, nil).Events(context.Background(), id, evs[1].ID); err != nil || len(rest) != 2 {
		t.Errorf("events after %d: %d, %v", evs[1].ID, len(rest), err)
	}
}

func TestListRunsWhere(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	done := p.Label(t, 7)
	if r := p.Work(t, done, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	queued := p.Label(t, 8)
	ctx := context.Background()
	tests := []struct {
		name string
		f    run.Filter
		want []int64
	}{
		{"All", run.Filter{Limit: 10}, []int64{queued, done}},
		{"Repository", run.Filter{Owner: "OCTO", Repo: "pager", Limit: 10}, []int64{queued, done}},
		{"OtherRepository", run.Filter{Owner: "octo", Repo: "other", Limit: 10}, nil},
		{"RepositoryID", run.Filter{RepoID: 42, Limit: 10}, []int64{queued, done}},
		{"OtherRepositoryID", run.Filter{RepoID: 43, Limit: 10}, nil},
		{"NameOfAnotherID", run.Filter{RepoID: 43, Owner: "octo", Repo: "pager", Limit: 10}, nil},
		{"State", run.Filter{State: run.StateSucceeded, Limit: 10}, []int64{done}},
		{"Limit", run.Filter{Limit: 1}, []int64{queued}},
	}
	for _, tt := range tests {
		got, err := run.NewStore(p.Pool, nil).Runs(ctx, tt.f)
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
	f, err := run.NewStore(p.Pool, nil).Facts(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != run.KindIssue || f.ModelMS != 40000 || f.TestMS != 3000 {
		t.Errorf("facts = %+v", f)
	}
}
