package leaf

import (
	"reflect"
	"strings"
	"testing"
)

// Every text the model chose passes through the functions (arguments through args), and the
// original shares nothing that changed: a redaction leaves the loop's own messages as they were.
func TestMapTexts(t *testing.T) {
	content := "content"
	orig := Step{Index: 2, Assistant: Message{
		Role: "assistant", Content: &content, ReasoningContent: "reasoning", ToolCallID: "call-id",
		ToolCalls: []ToolCall{{ID: "id", Type: "function", Function: FunctionCall{Name: "name", Arguments: `{"a":"b"}`}}},
	}, Observations: []Observation{{Tool: "tool", Observation: "observation"}}}
	keep := Step{Index: 2, Assistant: Message{
		Role: "assistant", Content: &[]string{"content"}[0], ReasoningContent: "reasoning", ToolCallID: "call-id",
		ToolCalls: []ToolCall{{ID: "id", Type: "function", Function: FunctionCall{Name: "name", Arguments: `{"a":"b"}`}}},
	}, Observations: []Observation{{Tool: "tool", Observation: "observation"}}}
	args := func(s string) string { return "ARGS" + s }
	got := orig.MapTexts(strings.ToUpper, args)
	want := Step{Index: 2, Assistant: Message{
		Role: "assistant", Content: &[]string{"CONTENT"}[0], ReasoningContent: "REASONING", ToolCallID: "CALL-ID",
		ToolCalls: []ToolCall{{ID: "ID", Type: "function", Function: FunctionCall{Name: "NAME", Arguments: `ARGS{"a":"b"}`}}},
	}, Observations: []Observation{{Tool: "TOOL", Observation: "OBSERVATION"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mapped step:\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(orig, keep) {
		t.Errorf("the original changed:\n%+v", orig)
	}
	ts := TrajectoryStep{Step: 2, Assistant: orig.Assistant, Observations: orig.Observations}.MapTexts(strings.ToUpper, args)
	if !reflect.DeepEqual(ts, TrajectoryStep{Step: 2, Assistant: want.Assistant, Observations: want.Observations}) {
		t.Errorf("mapped trajectory step: %+v", ts)
	}
	if (Step{}).MapTexts(strings.ToUpper, args).Observations != nil {
		t.Error("nil observations became a slice")
	}
}
