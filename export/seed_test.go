package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/runner/leaf"
)

// call is one tool call of a seeded step and what it returned.
type call struct {
	id, tool, args, obs string
}

// trajectory builds a run's trajectory as the runner does (leaf.Result.Trajectory), with one
// step per element of steps and a final message; unanswered > 0 adds a last assistant turn
// whose calls got no observation (a tool_error), as the loop leaves it.
func trajectory(runID int64, task string, steps [][]call, final string, unanswered int) []byte {
	r := &leaf.Result{Messages: []leaf.Message{text("system", leaf.SystemPrompt), text("user", task)}, ExitReason: leaf.ExitAgent}
	for i, calls := range steps {
		a := leaf.Message{Role: "assistant"}
		if i%2 == 1 {
			a.Content = ptr(fmt.Sprintf("Looking at step %d.", i))
		}
		a.ReasoningContent = "thinking about step " + fmt.Sprint(i)
		st := leaf.Step{Index: i, Observations: []leaf.Observation{}}
		for _, c := range calls {
			a.ToolCalls = append(a.ToolCalls, leaf.ToolCall{ID: c.id, Type: "function", Function: leaf.FunctionCall{Name: c.tool, Arguments: c.args}})
		}
		st.Assistant = a
		r.Messages = append(r.Messages, a)
		for _, c := range calls {
			r.Messages = append(r.Messages, leaf.Message{Role: "tool", ToolCallID: c.id, Content: ptr(c.obs)})
			st.Observations = append(st.Observations, leaf.Observation{Tool: c.tool, Observation: c.obs})
		}
		r.Steps = append(r.Steps, st)
		r.NSteps++
	}
	if unanswered > 0 {
		a := leaf.Message{Role: "assistant"}
		for k := range unanswered {
			a.ToolCalls = append(a.ToolCalls, leaf.ToolCall{ID: fmt.Sprintf("lost-%d", k), Type: "function",
				Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"sleep 1"}`}})
		}
		r.Messages = append(r.Messages, a)
		r.NSteps++
		r.ExitReason, r.Error = leaf.ExitToolError, "running tool Bash: the sandbox went away"
	} else {
		r.Messages = append(r.Messages, text("assistant", final))
		r.Steps = append(r.Steps, leaf.Step{Index: len(steps), Assistant: text("assistant", final), Observations: []leaf.Observation{}})
		r.NSteps++
		r.FinalMessage = final
	}
	b, err := json.Marshal(r.Trajectory(fmt.Sprintf("run-%d", runID), "o/r#1", 0, "diff --git a/x.py b/x.py\n", false))
	if err != nil {
		panic(err)
	}
	return b
}

func text(role, s string) leaf.Message { return leaf.Message{Role: role, Content: &s} }
func ptr(s string) *string             { return &s }

// plainSteps is n ordinary steps: a Read and a Bash each.
func plainSteps(n int) [][]call {
	var steps [][]call
	for i := range n {
		steps = append(steps, []call{
			{fmt.Sprintf("call_r%d", i), "Read", fmt.Sprintf(`{"file_path":"src/mod%d.py"}`, i), fmt.Sprintf("src/mod%d.py\n1. def f():\n2.     return %d", i, i)},
			{fmt.Sprintf("call_b%d", i), "Bash", `{"command":"python -m pytest -q"}`, "Exit code: 1\nSTDOUT:\n1 failed, 3 passed\nSTDERR:\n"},
		})
	}
	return steps
}

// run is a runs row to seed; the zero values are filled in by seed.
type run struct {
	repoID      int64
	owner, repo string
	issue       int
	kind        string // "" for issue
	pr          int    // pr_number of an issue run; 0: none
	state       string // "" for succeeded
	model       string
	check       string // the check run's conclusion; "" for none
	request     string // a follow-up's request
	created     time.Time
	steps       [][]call
	final       string
	unanswered  int
	traj        []byte           // the trajectory as stored; nil: built from steps
	tests       *json.RawMessage // the tests event's data; nil: none
}

// db is a migrated schema of its own.
type db struct {
	t    testing.TB
	pool *pgxpool.Pool
	n    int
}

func newDB(t testing.TB) *db {
	return &db{t: t, pool: dbtest.New(t)}
}

var day0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// seed inserts r and returns its id.
func (d *db) seed(r run) int64 {
	d.t.Helper()
	d.n++
	if r.kind == "" {
		r.kind = "issue"
	}
	if r.state == "" {
		r.state = "succeeded"
	}
	if r.created.IsZero() {
		r.created = day0.Add(time.Duration(d.n) * time.Hour)
	}
	if r.issue == 0 {
		r.issue = 1
	}
	ctx := context.Background()
	var id int64
	var pr *int
	if r.pr != 0 {
		pr = &r.pr
	}
	var request *string
	if r.request != "" {
		request = &r.request
	}
	var check any
	if r.check != "" {
		check = fmt.Sprintf(`{"Name":"frognano / tests","Status":"completed","Conclusion":%q}`, r.check)
	}
	err := d.pool.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue,
			labeler, state, kind, created_at, model, exit_reason, steps, base_sha, pr_number, check_run, request, finished_at)
		VALUES ('h', $1, 7, $2, $3, $4, $5, 'alice', $6, $7, $8, nullif($9, ''), 'agent', $10, 'b4se', $11, $12, $13, $8)
		RETURNING id`, fmt.Sprintf("d%d", d.n), r.repoID, r.owner, r.repo, r.issue, r.state, r.kind, r.created, r.model,
		len(r.steps), pr, check, request).Scan(&id)
	if err != nil {
		d.t.Fatalf("seeding a run: %v", err)
	}
	traj := r.traj
	if traj == nil {
		final := r.final
		if final == "" {
			final = "Fixed the off-by-one in f."
		}
		traj = trajectory(id, "Fix the bug in f.", r.steps, final, r.unanswered)
	}
	if _, err := d.pool.Exec(ctx, `UPDATE runs SET trajectory = $2 WHERE id = $1`, id, traj); err != nil {
		d.t.Fatalf("seeding a trajectory: %v", err)
	}
	if r.tests != nil {
		if _, err := d.pool.Exec(ctx, `INSERT INTO run_events (run_id, kind, data) VALUES ($1, 'tests', $2)`, id, []byte(*r.tests)); err != nil {
			d.t.Fatalf("seeding a tests event: %v", err)
		}
	}
	return id
}

// outcome is a pull_outcomes row to seed.
type outcome struct {
	repoID                  int64
	owner, repo             string
	number, issue           int
	firstRun, lastRun       int64
	state                   string
	ours                    bool
	peopleCommits           int
	patchLines, peopleLines *int
	mergeSHA                string
	followups               int
}

func (d *db) outcome(o outcome) {
	d.t.Helper()
	var ended any
	if o.state != "open" {
		ended = day0.Add(72 * time.Hour)
	}
	_, err := d.pool.Exec(context.Background(), `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours,
			issue, first_run_id, last_run_id, model, opened_at, state, draft, ready_at, ended_at, ended_by, people_commits,
			patch_lines, people_lines, merge_sha, followups)
		VALUES ($1, $2, 7, $3, $4, $5, nullif($6, 0), $7, $8, 'default', $9, $10, false, $9, $11, 'bob', $12, $13, $14, nullif($15, ''), $16)`,
		o.repoID, o.number, o.owner, o.repo, o.ours, o.issue, o.firstRun, o.lastRun, day0.Add(2*time.Hour), o.state, ended,
		o.peopleCommits, o.patchLines, o.peopleLines, o.mergeSHA, o.followups)
	if err != nil {
		d.t.Fatalf("seeding a pull request's outcome: %v", err)
	}
}

func intp(n int) *int { return &n }

func raw(s string) *json.RawMessage {
	r := json.RawMessage(s)
	return &r
}
