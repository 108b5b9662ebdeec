package export

import (
	"encoding/json"
	"testing"

	"github.com/frognano/frognano/runner/leaf"
)

func msg(role, content string, calls ...string) leaf.Message {
	m := leaf.Message{Role: role}
	if content != "" || role != "assistant" {
		m.Content = &content
	}
	for _, id := range calls {
		m.ToolCalls = append(m.ToolCalls, leaf.ToolCall{ID: id, Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"ls"}`}})
	}
	return m
}

func answer(id, obs string) leaf.Message {
	return leaf.Message{Role: "tool", ToolCallID: id, Content: &obs}
}

// TestChatOf: what a chat record keeps of a trajectory's messages, and where it cuts.
func TestChatOf(t *testing.T) {
	t.Parallel()
	head := []leaf.Message{msg("system", "s"), msg("user", "u")}
	tests := []struct {
		name    string
		msgs    []leaf.Message
		wantIDs [][]string // each assistant's call ids in the record
		wantLen int
		wantCut int
		wantOK  bool
	}{
		{"Whole", []leaf.Message{msg("assistant", "", "a", "b"), answer("a", "1"), answer("b", "2"), msg("assistant", "done")},
			[][]string{{"a", "b"}, nil}, 6, 0, true},
		{"UnansweredLastTurn", []leaf.Message{msg("assistant", "", "a"), answer("a", "1"), msg("assistant", "", "b", "c"), answer("b", "2")},
			[][]string{{"a"}}, 4, 2, true},
		{"AnswerOutOfOrder", []leaf.Message{msg("assistant", "", "a", "b"), answer("b", "2"), answer("a", "1")},
			nil, 2, 3, false},
		{"OrphanAnswer", []leaf.Message{msg("assistant", "hi"), answer("z", "?"), msg("assistant", "more")},
			[][]string{nil}, 3, 2, true},
		{"EmptyIDsRenumbered", []leaf.Message{msg("assistant", "", "", ""), answer("", "1"), answer("", "2"), msg("assistant", "", "x"), answer("x", "3")},
			[][]string{{"call_1", "call_2"}, {"call_3"}}, 7, 0, true},
		{"RepeatedIDsRenumbered", []leaf.Message{msg("assistant", "", "a"), answer("a", "1"), msg("assistant", "", "a"), answer("a", "2")},
			[][]string{{"call_1"}, {"call_2"}}, 6, 0, true},
		{"NoTurn", nil, nil, 2, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := &leaf.Trajectory{Messages: append(append([]leaf.Message{}, head...), tt.msgs...), Tools: leaf.ToolSchemas()}
			rec, cut, ok := chatOf(tr)
			if len(rec.Messages) != tt.wantLen || cut != tt.wantCut || ok != tt.wantOK {
				t.Fatalf("%d messages, cut %d, ok %v; want %d, %d, %v", len(rec.Messages), cut, ok, tt.wantLen, tt.wantCut, tt.wantOK)
			}
			var ids [][]string
			var pending []string
			for _, m := range rec.Messages {
				switch m.Role {
				case "assistant":
					var these []string
					for _, c := range m.ToolCalls {
						these = append(these, c.ID)
						if c.Type != "function" {
							t.Errorf("call type %q", c.Type)
						}
					}
					ids = append(ids, these)
					pending = append(pending, these...)
					if m.Content == nil && len(m.ToolCalls) == 0 {
						t.Error("an assistant message with neither content nor calls")
					}
				case "tool":
					if len(pending) == 0 || m.ToolCallID != pending[0] {
						t.Fatalf("answer %q, pending %v", m.ToolCallID, pending)
					}
					pending = pending[1:]
				}
			}
			if got, want := mustJSON(ids), mustJSON(tt.wantIDs); got != want {
				t.Errorf("call ids %s, want %s", got, want)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzChatOf: whatever a stored trajectory's messages hold (the model wrote them), a chat
// record pairs every call with one answer, in order, with unique non-empty ids.
func FuzzChatOf(f *testing.F) {
	f.Add([]byte(`[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"Read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]`))
	f.Add([]byte(`[{"role":"assistant","content":"hi"},{"role":"tool","tool_call_id":"","content":"x"},{"role":"user","content":"u"}]`))
	f.Add([]byte(`[{"role":"assistant","tool_calls":[{"id":"","function":{"name":"","arguments":""}},{"id":"","function":{}}]},{"role":"tool","tool_call_id":""},{"role":"tool","tool_call_id":""}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var msgs []leaf.Message
		if json.Unmarshal(b, &msgs) != nil {
			return
		}
		rec, cut, ok := chatOf(&leaf.Trajectory{Messages: msgs})
		if cut < 0 || cut > len(msgs) || len(rec.Messages) < len(msgs)-cut {
			t.Fatalf("cut %d of %d, %d kept", cut, len(msgs), len(rec.Messages))
		}
		seen := map[string]bool{}
		var pending []string
		assistants := 0
		for _, m := range rec.Messages {
			if m.Role == "tool" {
				if len(pending) == 0 || m.ToolCallID != pending[0] || m.Content == nil {
					t.Fatalf("answer %q, pending %v", m.ToolCallID, pending)
				}
				pending = pending[1:]
				continue
			}
			if len(pending) > 0 {
				t.Fatalf("calls %v unanswered", pending)
			}
			if m.Role == "assistant" {
				assistants++
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || seen[c.ID] {
					t.Fatalf("call id %q empty or repeated", c.ID)
				}
				seen[c.ID] = true
				pending = append(pending, c.ID)
			}
		}
		if len(pending) > 0 || ok != (assistants > 0) {
			t.Fatalf("pending %v, ok %v with %d assistant messages", pending, ok, assistants)
		}
	})
}
