package leaf

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// referenceToolsJSON is the reference's OPENAI_TOOLS as
// json.dumps(OPENAI_TOOLS, separators=(",", ":")), one tool per line here.
const referenceToolsJSON = `[` +
	`{"type":"function","function":{"name":"Read","description":"Read a text file. Returns numbered lines.","parameters":{"type":"object","properties":{"file_path":{"type":"string","description":"Path to the file to read."},"offset":{"type":"integer","description":"Optional 1-based starting line."},"limit":{"type":"integer","description":"Optional maximum number of lines."}},"required":["file_path"]}}}` + `,` +
	`{"type":"function","function":{"name":"Write","description":"Write a complete file, creating parent directories when needed.","parameters":{"type":"object","properties":{"file_path":{"type":"string","description":"Path to write."},"content":{"type":"string","description":"Full file contents."}},"required":["file_path","content"]}}}` + `,` +
	`{"type":"function","function":{"name":"Edit","description":"Replace an exact string in a text file.","parameters":{"type":"object","properties":{"file_path":{"type":"string","description":"Path to edit."},"old_string":{"type":"string","description":"Exact text to replace."},"new_string":{"type":"string","description":"Replacement text."},"replace_all":{"type":"boolean","description":"Replace every occurrence instead of requiring one match."}},"required":["file_path","old_string","new_string"]}}}` + `,` +
	`{"type":"function","function":{"name":"Glob","description":"Find files by glob pattern.","parameters":{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern, e.g. **/*.py."},"path":{"type":"string","description":"Optional directory to search from."}},"required":["pattern"]}}}` + `,` +
	`{"type":"function","function":{"name":"Bash","description":"Run a shell command in the repository workdir.","parameters":{"type":"object","properties":{"command":{"type":"string","description":"Command to run."},"description":{"type":"string","description":"Short description of the command."},"timeout":{"type":"number","description":"Optional timeout in seconds."}},"required":["command"]}}}` +
	`]`

func TestToolSchemasMatchReference(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(ToolSchemas())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != referenceToolsJSON {
		t.Errorf("tool schemas differ from the reference:\n got %s\nwant %s", got, referenceToolsJSON)
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	lines := strings.Split(SystemPrompt, "\n")
	want := []string{
		"You are a software-engineering agent working in a checked-out repository.",
		"Use the available tools to inspect files, make focused edits, and run commands.",
		"Solve the task, validate when practical, then give a brief final answer.",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("system prompt lines = %q", lines)
	}
}

// TestRequestGolden pins the whole second request of a run (system, user, assistant
// with reasoning and a tool call, tool message; tools; sampling fields).
func TestRequestGolden(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "read-then-finish.json"))
	r := Run(context.Background(), b.cfg, "Fix the failing test in calc.py.", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	req := b.srv.Requests()[1]
	var got bytes.Buffer
	if err := json.Indent(&got, req.Raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	golden.CheckFile(t, filepath.Join("testdata", "request.golden.json"), got.String())
	// Independently of the golden file: the tools are the reference's bytes.
	if tools, _ := json.Marshal(req.Tools); string(tools) != referenceToolsJSON {
		t.Errorf("request tools differ from the reference")
	}
	for key, want := range map[string]any{
		"model": DefaultModel, "tool_choice": "auto", "temperature": 0.6, "parallel_tool_calls": true,
		"max_completion_tokens": 8192.0, "top_p": 0.95, "top_k": 20.0, "min_p": 0.0, "repetition_penalty": 1.0,
		"chat_template_kwargs": map[string]any{"enable_thinking": true},
	} {
		if !reflect.DeepEqual(req.Body[key], want) {
			t.Errorf("%s = %#v, want %#v", key, req.Body[key], want)
		}
	}
}

func TestRequestBodyExtraOverrides(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxCompletionTokens = 0
	cfg.Extra = map[string]any{"temperature": 1.0, "seed": 7}
	b, err := requestBody(cfg, []Message{textMessage("user", "x")})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	if body["temperature"] != 1.0 || body["seed"] != 7.0 {
		t.Errorf("extra did not override: %s", b)
	}
	if _, ok := body["max_completion_tokens"]; ok {
		t.Errorf("max_completion_tokens sent with no cap: %s", b)
	}
	if _, ok := body["top_k"]; ok {
		t.Errorf("default extra sent although Extra was set: %s", b)
	}
	if strings.Count(string(b), `"temperature"`) != 1 {
		t.Errorf("temperature appears twice: %s", b)
	}
}

// jsonKeys returns the keys of a JSON object in document order.
func jsonKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestTrajectoryShape(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "read-then-finish.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	raw, err := json.Marshal(r.Trajectory("t-1", "owner/repo#7", 42, "diff --git a/x b/x\n", false))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"trajectory_format", "trajectory_id", "instance_id", "seed", "messages", "tools", "steps",
		"n_steps", "exit_reason", "error", "final_message", "context_tokens", "elapsed_sec", "output_patch", "partial"}
	if got := jsonKeys(t, raw); !reflect.DeepEqual(got, want) {
		t.Errorf("trajectory keys = %v, want %v", got, want)
	}
	var doc struct {
		Format   string            `json:"trajectory_format"`
		Error    *string           `json:"error"`
		NSteps   int               `json:"n_steps"`
		Steps    []json.RawMessage `json:"steps"`
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
		Exit     string            `json:"exit_reason"`
		Final    string            `json:"final_message"`
		Elapsed  float64           `json:"elapsed_sec"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "leaf-function-calling" || doc.Error != nil || doc.NSteps != 2 || doc.Exit != ExitAgent ||
		doc.Final != "The file looks right." || doc.Elapsed <= 0 || string(doc.Tools) != referenceToolsJSON {
		t.Errorf("trajectory = %s", raw)
	}
	if got := jsonKeys(t, doc.Steps[0]); !reflect.DeepEqual(got, []string{"step", "assistant", "observations"}) {
		t.Errorf("step keys = %v", got)
	}
	wantMsgs := []string{
		`{"role":"system","content":` + mustJSON(t, SystemPrompt) + `}`,
		`{"role":"user","content":"task"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_read","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"calc.py\"}"}}],"reasoning_content":"Let me look at the file first."}`,
		`{"role":"tool","tool_call_id":"call_read","content":"Read: {\"file_path\":\"calc.py\"}"}`,
		`{"role":"assistant","content":"The file looks right."}`,
	}
	for i, m := range doc.Messages {
		if string(m) != wantMsgs[i] {
			t.Errorf("message %d = %s\nwant %s", i, m, wantMsgs[i])
		}
	}
	if !strings.Contains(string(doc.Steps[1]), `"observations":[]`) {
		t.Errorf("final step observations must be [], got %s", doc.Steps[1])
	}
}

func TestTrajectoryErrorField(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "llm-error.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	tr := r.Trajectory("t", "i", 0, "", true)
	if tr.Error == nil || !strings.Contains(*tr.Error, "invalid api key") || !tr.Partial || tr.NSteps != 1 || len(tr.Steps) != 0 {
		t.Errorf("trajectory = %+v", tr)
	}
	raw, _ := json.Marshal(tr)
	if !strings.Contains(string(raw), `"steps":[]`) {
		t.Errorf("steps must encode as [], got %s", raw)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrajectoryRoundTrip: a trajectory written to JSON decodes back into the same value,
// tool schemas (with their property order) included.
func TestTrajectoryRoundTrip(t *testing.T) {
	t.Parallel()
	res := &Result{ExitReason: ExitAgent, FinalMessage: "done"}
	want := res.Trajectory("t1", "inst", 7, "diff", false)
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Trajectory
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("decoding a trajectory: %v", err)
	}
	again, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b) {
		t.Errorf("round trip changed the trajectory:\n%s\n%s", b, again)
	}
}
