package leaf

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunOnEachServer runs the loop against each server's real reply shape (leaftest's
// Script.Server): the reasoning of a tool-calling turn, under whichever field the server
// names it, comes back on the next request under the field that server reads, and the
// server's own refusal of a prompt over its context ends the run with max_context_len.
func TestRunOnEachServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server  string
		sentKey string // the key the reasoning must be sent back under
	}{
		{"vllm", `"reasoning_content":"R1"`},
		{"vllm-both", `"reasoning_content":"R1"`},
		{"vllm-reasoning", `"reasoning":"R1"`},
		{"sglang", `"reasoning_content":"R1"`},
		{"llama-server", `"reasoning_content":"R1"`},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			t.Parallel()
			b := setup(t, leaftest.Script{Server: tt.server, Turns: []leaftest.Turn{
				{ReasoningContent: "R1", ToolCalls: []leaftest.ToolCall{{Name: "Read", Arguments: `{"file_path": "a.py"}`}},
					Usage: &leaftest.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}},
				{Expect: &leaftest.Expect{AssistantReasoning: "R1", MessageCount: 4}, ContextOverflow: true},
			}})
			r := Run(context.Background(), b.cfg, "task", b.tools, nil)
			if r.ExitReason != ExitMaxContext {
				t.Fatalf("exit %q (%s), want %q", r.ExitReason, r.Error, ExitMaxContext)
			}
			if r.Messages[2].ReasoningContent != "R1" {
				t.Errorf("assistant message = %+v, want the reasoning kept", r.Messages[2])
			}
			raw := string(b.srv.Requests()[1].Raw)
			other := `"reasoning":"R1"`
			if tt.sentKey == other {
				other = `"reasoning_content":"R1"`
			}
			if !strings.Contains(raw, tt.sentKey) || strings.Contains(raw, other) {
				t.Errorf("second request sends the reasoning as %s; want only %s", clipText(raw), tt.sentKey)
			}
			// The trajectory keeps the message as sent and reads back the same way.
			if got := mustJSON(t, r.Messages[2]); !strings.Contains(got, tt.sentKey) {
				t.Errorf("stored assistant message %s lacks %s", got, tt.sentKey)
			}
		})
	}
}

// TestContextOverflowPhrasings: every server's refusal of a prompt over its context, as its
// client sees it, is max_context_len, as the reference's phrases are; other errors are not.
func TestContextOverflowPhrasings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body string
		want bool
	}{
		{`{"object":"error","message":"The input (70000 tokens) is longer than the model's context length (65536 tokens).","type":"BadRequestError","param":null,"code":400}`, true},
		{`{"object":"error","message":"Requested token count exceeds the model's maximum context length of 65536 tokens. You requested a total of 70000 tokens: 61808 tokens from the input messages and 8192 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.","type":"BadRequestError","param":null,"code":400}`, true},
		{`{"error":{"message":"The decoder prompt (length 70000) is longer than the maximum model length of 65536. Make sure that ` + "`max_model_len`" + ` is no smaller than the number of text tokens.","type":"BadRequestError","param":null,"code":400}}`, true},
		{`{"error":{"message":"This model's maximum context length is 65536 tokens. However, your request has 70000 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=70000)","type":"BadRequestError","param":"input_tokens","code":400}}`, true},
		{`{"error":{"code":400,"message":"request (70000 tokens) exceeds the available context size (65536 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":70000,"n_ctx":65536}}`, true},
		{`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, true},
		{`{"object":"error","message":"[{'type': 'missing', 'loc': ('body', 'model')}]","type":"BadRequestError","param":null,"code":400}`, false},
		{`{"error":{"code":500,"message":"Jinja Exception: System message must be at the beginning","type":"server_error"}}`, false},
	} {
		err := &statusError{StatusCode: 400, Body: tt.body}
		if got := isContextOverflow(err); got != tt.want {
			t.Errorf("isContextOverflow(%.80s) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestRunArgumentsNotAString: a server that sends the arguments as an object (or any JSON
// value but a string) makes the reference's json.loads raise TypeError, so its tool runs
// with {}; the tool here gets "" (which the executor reads as {}), and the message keeps
// the value as compact JSON.
func TestRunArgumentsNotAString(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.Script{Turns: []leaftest.Turn{
		{RawBody: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Write","arguments":{"file_path": "w.txt", "content": "x"}}},{"id":"c2","type":"function","function":{"name":"Read","arguments":"{\"file_path\": \"w.txt\"}"}}]},"finish_reason":"tool_calls"}]}`},
		{Content: "done"},
	}})
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	calls := b.tools.Calls()
	if len(calls) != 2 || calls[0].Arguments != "" || calls[1].Arguments != `{"file_path": "w.txt"}` {
		t.Errorf("tools got %+v, want \"\" for the object and the string as sent", calls)
	}
	if got := r.Messages[2].ToolCalls[0].Function.Arguments; got != `{"file_path":"w.txt","content":"x"}` {
		t.Errorf("message keeps %q", got)
	}
}
