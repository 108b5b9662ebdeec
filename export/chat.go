package export

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/frognano/frognano/runner/leaf"
)

// ChatRecord is one record of FormatChat: exactly the chat-completions fine-tuning format,
// {"messages": [...], "tools": [...]}, and nothing else (the labels are in the side file).
type ChatRecord struct {
	Messages []ChatMessage     `json:"messages"`
	Tools    []leaf.ToolSchema `json:"tools"`
}

// ChatMessage is one message of a ChatRecord. system, user and tool messages always carry a
// content string; an assistant message carries content, tool calls, or both (content is left
// out when the model wrote none beside its calls, as the fine-tuning format's examples do). A
// model's reasoning is not part of the format and is left out.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []ChatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// ChatToolCall is one call of an assistant message: {id, type: "function", function: {name,
// arguments}}, the arguments the string the model wrote.
type ChatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction is the function part of a ChatToolCall.
type ChatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatOf turns a (redacted) trajectory into a ChatRecord. Each assistant message's tool calls
// are followed by one tool message per call, in the calls' order, whose tool_call_id is the
// call's id: the conversation is cut before an assistant message whose calls did not all get
// their observation (a run that ended on a tool error, or was cancelled between a call and its
// answer), and before anything out of that order; cut counts the messages left out. Ids that
// are empty or repeat within the record (a server that sends none) are renumbered call_1,
// call_2, ... in both places. ok is false when no whole assistant turn remains: such a record
// teaches nothing and the fine-tuning format needs one.
func chatOf(t *leaf.Trajectory) (rec ChatRecord, cut int, ok bool) {
	msgs := t.Messages
	out := make([]ChatMessage, 0, len(msgs))
	assistants := 0
	i := 0
loop:
	for i < len(msgs) {
		m := msgs[i]
		switch m.Role {
		case "system", "user":
			out = append(out, ChatMessage{Role: m.Role, Content: ptr(m.Text())})
			i++
		case "assistant":
			calls := m.ToolCalls
			if len(calls) == 0 {
				out = append(out, ChatMessage{Role: "assistant", Content: ptr(m.Text())})
				assistants++
				i++
				continue
			}
			if i+len(calls) >= len(msgs) {
				break loop // not every call was answered
			}
			for k, c := range calls {
				tm := msgs[i+1+k]
				if tm.Role != "tool" || tm.ToolCallID != c.ID {
					break loop
				}
			}
			am := ChatMessage{Role: "assistant", ToolCalls: make([]ChatToolCall, len(calls))}
			if m.Content != nil && *m.Content != "" {
				am.Content = ptr(*m.Content)
			}
			for k, c := range calls {
				am.ToolCalls[k] = ChatToolCall{ID: c.ID, Type: "function", Function: ChatFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}}
			}
			out = append(out, am)
			for k, c := range calls {
				out = append(out, ChatMessage{Role: "tool", ToolCallID: c.ID, Content: ptr(msgs[i+1+k].Text())})
			}
			assistants++
			i += 1 + len(calls)
		default:
			break loop // a tool message with no call before it, or a role the format lacks
		}
	}
	renumber(out)
	return ChatRecord{Messages: out, Tools: toolsOf(t)}, len(msgs) - i, assistants > 0
}

// renumber gives every call of rec an id of its own when some id is empty or repeats.
func renumber(msgs []ChatMessage) {
	seen := map[string]bool{}
	bad := false
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				bad = true
			}
			seen[c.ID] = true
		}
	}
	if !bad {
		return
	}
	n := 0
	var pending []string
	for i := range msgs {
		m := &msgs[i]
		switch {
		case len(m.ToolCalls) > 0:
			pending = pending[:0]
			for k := range m.ToolCalls {
				n++
				m.ToolCalls[k].ID = fmt.Sprintf("call_%d", n)
				pending = append(pending, m.ToolCalls[k].ID)
			}
		case m.Role == "tool" && len(pending) > 0:
			m.ToolCallID, pending = pending[0], pending[1:]
		}
	}
}

// toolsOf is the trajectory's tool schemas: Leaf's own (leaf.ToolSchemas, whose properties
// are in the order the chat template renders them) when the stored ones are the same schemas,
// as they always are; PostgreSQL's jsonb keeps an object's keys in an order of its own, so the
// stored properties' order is not the model's. A trajectory with other tools keeps them.
func toolsOf(t *leaf.Trajectory) []leaf.ToolSchema {
	canonical := leaf.ToolSchemas()
	if sameJSON(t.Tools, canonical) {
		return canonical
	}
	return t.Tools
}

// sameJSON reports whether a and b encode to the same JSON value, whatever their keys' order.
func sameJSON(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var av, bv any
	if json.Unmarshal(ab, &av) != nil || json.Unmarshal(bb, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}

func ptr(s string) *string { return &s }
