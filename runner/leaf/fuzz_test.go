package leaf

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// FuzzDecodeResponse feeds untrusted model-server bodies to the decoder: it must not
// panic, and whatever it accepts must be the whitelisted assistant message.
func FuzzDecodeResponse(f *testing.F) {
	for _, seed := range []string{
		`{"choices":[{"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[{"message":{"content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"Bash","arguments":{"command":"ls"}}}]}}]}`,
		`{"choices":[{"message":{"content":"x"},"finish_reason":"length"}],"usage":{"prompt_tokens":1.5,"total_tokens":"9"}}`,
		`{"choices":[]}`,
		`{"error":{"message":"This model's maximum context length is 10 tokens"}}`,
		`{"choices":[{"message":{"content":null,"reasoning":"r","tool_calls":[]},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":"x","reasoning":"r","reasoning_content":"r"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":"\ud800\u0000"}}]}`,
		`[]`, `null`, ``, `{"choices":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := decodeResponse(body)
		if err != nil {
			return
		}
		a := c.Assistant
		if a.Role != "assistant" || a.ToolCallID != "" {
			t.Fatalf("decoded message %+v is not a plain assistant message", a)
		}
		for _, call := range a.ToolCalls {
			if call.Type != "function" {
				t.Fatalf("tool call type %q", call.Type)
			}
		}
		out, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("re-encoding the assistant message: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("re-encoded message is not JSON: %v", err)
		}
		if _, both := back["reasoning"]; both && back["reasoning_content"] != nil {
			t.Fatalf("the reasoning is sent under two keys: %s", out)
		}
		for k := range back {
			switch k {
			case "role", "content", "tool_calls", "reasoning_content", "reasoning":
			default:
				t.Fatalf("field %q leaked into the assistant message", k)
			}
		}
		_ = estimateTokens([]Message{a}) // must not panic on any text
	})
}

// FuzzParseRetryAfter: the header is server-controlled; the wait must stay in bounds.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, seed := range []string{"2", "0", "-1", "1.5", "1e309", "NaN", "Inf", now.Add(time.Minute).Format(http.TimeFormat), "Mon, 02 Jan 2006", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if ok && (d <= 0 || d > maxRetryAfter) {
			t.Fatalf("parseRetryAfter(%q) = %v, out of (0, %v]", v, d, maxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %v with ok=false", v, d)
		}
	})
}
