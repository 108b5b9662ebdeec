package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf"
)

// TestModelToolCallReadsTheAnswerAsARunDoes: the probe judges the model server's answer with
// leaf's own reader, so what it passes is what a run's loop gets.
func TestModelToolCallReadsTheAnswerAsARunDoes(t *testing.T) {
	t.Parallel()
	const bashCall = `"tool_calls":[{"id":"c1","type":"function","function":{"name":"Bash","arguments":%s}}]`
	tests := []struct {
		name   string
		answer string
		status Status
		detail string
	}{
		{"ToolCall", `{"choices":[{"message":{"role":"assistant","content":null,` +
			strings.Replace(bashCall, "%s", `"{\"command\":\"true\"}"`, 1) + `},"finish_reason":"tool_calls"}]}`,
			Pass, "no reasoning_content"},
		// vLLM since its rename sends the reasoning as "reasoning": leaf reads both names.
		{"ToolCallWithReasoning", `{"choices":[{"message":{"role":"assistant","reasoning":"run it","content":null,` +
			strings.Replace(bashCall, "%s", `"{\"command\":\"true\"}"`, 1) + `},"finish_reason":"tool_calls"}]}`,
			Pass, "reasoning_content came back"},
		{"Prose", `{"choices":[{"message":{"role":"assistant","content":"I would run true."},"finish_reason":"stop"}]}`,
			Fail, `no tool call in`},
		// Arguments sent as an object: the loop calls the tool with {} (no command), so the
		// probe must not pass it either.
		{"ArgumentsNotAString", `{"choices":[{"message":{"role":"assistant","content":null,` +
			strings.Replace(bashCall, "%s", `{"command":"true"}`, 1) + `},"finish_reason":"tool_calls"}]}`,
			Fail, "not Bash with a command"},
		{"NoChoices", `{"choices":[]}`, Fail, "not a chat completion"},
		{"NotJSON", `<html>`, Fail, "not a chat completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
					t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.answer))
			}))
			t.Cleanup(srv.Close)
			cfg := leaf.DefaultConfig()
			cfg.BaseURL, cfg.Model, cfg.HTTPClient = srv.URL+"/v1", "frognano-4b", srv.Client()
			got := ModelToolCall(context.Background(), cfg)
			if got.Status != tt.status || !strings.Contains(got.Detail, tt.detail) {
				t.Errorf("ModelToolCall = %s %q, want %s with %q", got.Status, got.Detail, tt.status, tt.detail)
			}
		})
	}
}
