package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/runner/leaf"
)

// chatSchema is the JSON Schema of the chat-completions fine-tuning format (testdata).
var chatSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	f, err := os.Open("testdata/chat-finetune.schema.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "https://frognano.invalid/schemas/chat-finetune.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// exported is an export read back: each records line and each labels line, decoded.
type exported struct {
	records [][]byte // the lines, without their newline
	labels  []export.Labels
}

// readBack reads the files of an export to out in format and validates them: every line of
// both files parses, each ends in a newline, the files have as many lines (the labels paired
// with the records, run ids rising), each record is in its format (a chat-jsonl record is
// accepted by the fine-tuning format's schema and holds nothing else; a leaf record is a
// trajectory document, whose id is its labels' run), and every tool call is answered by its
// observation, ids pairing up, in order.
func readBack(t *testing.T, out, format string) exported {
	t.Helper()
	var e exported
	recs := lines(t, out)
	labs := lines(t, out+export.LabelsSuffix)
	if len(recs) != len(labs) {
		t.Fatalf("%d records but %d label lines", len(recs), len(labs))
	}
	var schema interface {
		Validate(any) error
	}
	if format == export.FormatChat {
		s, err := chatSchema()
		if err != nil {
			t.Fatalf("compiling the fine-tuning schema: %v", err)
		}
		schema = s
	}
	for i, line := range recs {
		var l export.Labels
		dec := json.NewDecoder(bytes.NewReader(labs[i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("labels line %d does not parse: %v\n%s", i+1, err, labs[i])
		}
		if i > 0 && l.RunID <= e.labels[i-1].RunID {
			t.Fatalf("labels line %d: run %d after run %d: not in the runs' order", i+1, l.RunID, e.labels[i-1].RunID)
		}
		e.labels = append(e.labels, l)
		switch format {
		case export.FormatChat:
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				t.Fatalf("record %d does not parse: %v", i+1, err)
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("record %d is not in the fine-tuning format: %v\n%s", i+1, err, line)
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(line, &keys); err != nil || len(keys) != 2 || keys["messages"] == nil || keys["tools"] == nil {
				t.Fatalf("record %d holds more than messages and tools: %v", i+1, slices.Collect(mapKeys(keys)))
			}
			var rec export.ChatRecord
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatalf("record %d: %v", i+1, err)
			}
			checkChatPairs(t, i+1, rec)
		default:
			if !bytes.HasPrefix(line, []byte(`{"trajectory_format":"leaf-function-calling","trajectory_id":`)) {
				t.Fatalf("record %d does not start as Leaf's trajectory document: %.80s", i+1, line)
			}
			var tr leaf.Trajectory
			if err := json.Unmarshal(line, &tr); err != nil {
				t.Fatalf("record %d is not a trajectory: %v", i+1, err)
			}
			if want := fmt.Sprintf("run-%d", l.RunID); tr.TrajectoryID != want {
				t.Fatalf("record %d is %s, its labels are of run %d", i+1, tr.TrajectoryID, l.RunID)
			}
			checkLeafPairs(t, i+1, tr)
		}
	}
	e.records = recs
	return e
}

func mapKeys(m map[string]json.RawMessage) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// lines reads path's lines, failing on a last line without its newline.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("%s ends in the middle of a line", path)
	}
	return bytes.Split(b[:len(b)-1], []byte("\n"))
}

// checkChatPairs: each assistant message's calls are answered, in order and by id, by the tool
// messages right after it; no tool message answers anything else; ids are unique.
func checkChatPairs(t *testing.T, n int, rec export.ChatRecord) {
	t.Helper()
	seen := map[string]bool{}
	var pending []string
	for i, m := range rec.Messages {
		switch m.Role {
		case "tool":
			if len(pending) == 0 || m.ToolCallID != pending[0] {
				t.Fatalf("record %d, message %d: tool answer %q, expected the call %v", n, i, m.ToolCallID, pending)
			}
			pending = pending[1:]
		default:
			if len(pending) > 0 {
				t.Fatalf("record %d, message %d (%s): calls %v not answered", n, i, m.Role, pending)
			}
			for _, c := range m.ToolCalls {
				if seen[c.ID] {
					t.Fatalf("record %d: call id %q twice", n, c.ID)
				}
				seen[c.ID] = true
				pending = append(pending, c.ID)
			}
		}
	}
	if len(pending) > 0 {
		t.Fatalf("record %d ends with calls %v not answered", n, pending)
	}
}

// checkLeafPairs: in a trajectory's messages, each call's observation follows in order (the
// end of a run that broke on a tool may leave the last calls unanswered, as the reference
// does), and each step holds one observation per call, of the call's tool.
func checkLeafPairs(t *testing.T, n int, tr leaf.Trajectory) {
	t.Helper()
	var pending []string
	for i, m := range tr.Messages {
		if m.Role == "tool" {
			if len(pending) == 0 || m.ToolCallID != pending[0] {
				t.Fatalf("record %d, message %d: tool answer %q, expected %v", n, i, m.ToolCallID, pending)
			}
			pending = pending[1:]
			continue
		}
		if len(pending) > 0 {
			t.Fatalf("record %d, message %d: calls %v not answered", n, i, pending)
		}
		for _, c := range m.ToolCalls {
			pending = append(pending, c.ID)
		}
	}
	if len(pending) > 0 && tr.ExitReason != leaf.ExitToolError && tr.ExitReason != leaf.ExitCancelled {
		t.Fatalf("record %d ends (%s) with calls %v not answered", n, tr.ExitReason, pending)
	}
	for _, s := range tr.Steps {
		if len(s.Observations) != len(s.Assistant.ToolCalls) {
			t.Fatalf("record %d, step %d: %d calls, %d observations", n, s.Step, len(s.Assistant.ToolCalls), len(s.Observations))
		}
		for k, o := range s.Observations {
			if o.Tool != s.Assistant.ToolCalls[k].Function.Name {
				t.Fatalf("record %d, step %d: observation %d is of %s, the call of %s", n, s.Step, k, o.Tool, s.Assistant.ToolCalls[k].Function.Name)
			}
		}
	}
}

// noValue fails when any of the files of out holds one of values.
func noValue(t *testing.T, out string, values map[string]string) {
	t.Helper()
	for _, p := range []string{out, out + export.LabelsSuffix} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for what, v := range values {
			if strings.Contains(string(b), v) {
				t.Errorf("%s holds %s", p, what)
			}
		}
	}
}
