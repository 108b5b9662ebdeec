package leaf

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

func str(s string) *string { return &s }

// TestPythonJSONLen pins the length against Python's
// json.dumps(msgs, separators=(",", ":"), ensure_ascii=False).encode() for the same
// dicts (values computed with CPython 3.11).
func TestPythonJSONLen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"Plain", []Message{textMessage("user", "hello")}, 35},
		{"Escapes", []Message{{Role: "tool", ToolCallID: "c1", Content: str("a\"b\\c\nd\te\x01f\x7f<>&é😀\u2028")}}, 83},
		{"Assistant", []Message{{Role: "assistant", ReasoningContent: "hmm\n", ToolCalls: []ToolCall{{
			ID: "call_1", Type: "function", Function: FunctionCall{Name: "Read", Arguments: `{"file_path": "x.py"`}}}}}, 180},
		{"Mixed", []Message{textMessage("system", "S"), textMessage("user", "U"), {Role: "assistant", Content: str("done")}}, 101},
		{"InvalidUTF8", []Message{{Role: "tool", ToolCallID: "c", Content: str("ok\xffz")}}, 55},
	}
	for _, tt := range tests {
		if got := pythonJSONLen(tt.msgs); got != tt.want {
			t.Errorf("%s: length %d, want %d", tt.name, got, tt.want)
		}
		if got, want := estimateTokens(tt.msgs), (tt.want+3)/4; got != want {
			t.Errorf("%s: tokens %d, want %d", tt.name, got, want)
		}
	}
	if estimateTokens(nil) != 0 {
		t.Error("no messages must count 0")
	}
}

// plainEstimate re-derives the estimate with encoding/json; valid only for text that
// Go and Python escape alike (no <, >, &, U+2028/9).
func plainEstimate(t *testing.T, msgs []Message) int {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msgs); err != nil {
		t.Fatal(err)
	}
	return int(math.Ceil(float64(b.Len()-1) / 4)) // minus Encode's newline
}

func TestContextAccountingUsagePlusToolMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "read-then-finish.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	toolMsg := r.Messages[3]
	if want := 930 + plainEstimate(t, []Message{toolMsg}); r.Steps[0].ContextTokens != want {
		t.Errorf("after the tool step: %d tokens, want usage 930 + tool message = %d", r.Steps[0].ContextTokens, want)
	}
	if r.ContextTokens != 988 || r.Steps[1].ContextTokens != 988 {
		t.Errorf("final context %d, want the last usage total 988", r.ContextTokens)
	}
}

func TestContextAccountingWithoutUsage(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "no-usage.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	want := plainEstimate(t, r.Messages[:3]) + plainEstimate(t, r.Messages[3:4])
	if r.Steps[0].ContextTokens != want {
		t.Errorf("first step %d tokens, want estimate of all messages + tool message = %d", r.Steps[0].ContextTokens, want)
	}
	if want := plainEstimate(t, r.Messages); r.ContextTokens != want {
		t.Errorf("final %d tokens, want estimate of all messages = %d", r.ContextTokens, want)
	}
}

func TestContextLimitCountsToolMessages(t *testing.T) {
	t.Parallel()
	// As the reference's test: usage 10 under a limit of 11; the tool message pushes
	// the count over.
	b := setup(t, leaftest.Script{Turns: []leaftest.Turn{{
		ToolCalls: []leaftest.ToolCall{{Name: "Read", Arguments: `{"file_path":"file.py"}`}},
		Usage:     &leaftest.Usage{TotalTokens: 10},
	}}})
	b.cfg.MaxContextTokens = 11
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitMaxContext || r.ContextTokens <= 10 {
		t.Fatalf("exit %q with %d tokens, want max_context_len above 10", r.ExitReason, r.ContextTokens)
	}
}

func TestLengthExitReason(t *testing.T) {
	t.Parallel()
	some := func(v int) optInt { return optInt{V: v, OK: true} }
	tests := []struct {
		name       string
		cap, limit int
		u          usage
		want       string
	}{
		{"CapHit", 20, 0, usage{Prompt: some(10), Completion: some(20)}, ExitMaxTokensPerTurn},
		{"ContextClamped", 20, 30, usage{Prompt: some(10), Completion: some(20)}, ExitMaxContext},
		{"UnderCapMeansContext", 100, 0, usage{Prompt: some(10), Completion: some(20)}, ExitMaxContext},
		{"NoUsageWithCap", 20, 0, usage{}, ExitMaxTokensPerTurn},
		{"NoUsageNoCap", 0, 0, usage{}, ExitMaxContext},
	}
	for _, tt := range tests {
		cfg := Config{MaxCompletionTokens: tt.cap, MaxContextTokens: tt.limit}
		if got := lengthExitReason(cfg, tt.u); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCachedTokensAreSummed: the prompt tokens a server served from its prompt cache
// (usage.prompt_tokens_details.cached_tokens) are summed over the turns that report them; a
// turn without the detail adds nothing, and the request the model gets is the same.
func TestCachedTokensAreSummed(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.Script{Turns: []leaftest.Turn{
		{ToolCalls: []leaftest.ToolCall{{Name: "Read", Arguments: `{"file_path":"file.py"}`}},
			Usage: &leaftest.Usage{PromptTokens: 900, CompletionTokens: 30, TotalTokens: 930}},
		{ToolCalls: []leaftest.ToolCall{{Name: "Read", Arguments: `{"file_path":"file.py"}`}},
			Usage: &leaftest.Usage{PromptTokens: 960, CompletionTokens: 20, TotalTokens: 980, PromptTokensDetails: &leaftest.PromptTokensDetails{CachedTokens: 896}}},
		{Content: "done", Usage: &leaftest.Usage{PromptTokens: 1000, CompletionTokens: 5, TotalTokens: 1005, PromptTokensDetails: &leaftest.PromptTokensDetails{CachedTokens: 960}}},
	}})
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	if r.PromptTokens != 2860 || r.CompletionTokens != 55 || r.CachedTokens != 1856 {
		t.Errorf("tokens %d prompt, %d completion, %d cached; want 2860, 55, 1856", r.PromptTokens, r.CompletionTokens, r.CachedTokens)
	}
}
