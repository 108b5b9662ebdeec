// Package leaftest is a scripted, OpenAI-compatible chat-completions server on
// httptest for every test in the project that needs a model. A Script (JSON, kept in
// testdata/models/) lists the replies turn by turn, with optional assertions on each
// incoming request; the server fails the test on a request beyond the script, a
// failed assertion, or (unless allow_unused) turns left unused.
//
// leaftest must never reach a real model or the network beyond loopback, and does not
// import package leaf, so leaf's own tests can use it.
package leaftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Script is a scripted model session.
type Script struct {
	// Description is for human readers.
	Description string `json:"description,omitempty"`
	// AllowUnused accepts a run that stops before the last turn (e.g. cancellation).
	AllowUnused bool `json:"allow_unused,omitempty"`
	// Server is the shape the replies take: "vllm" (the default), "vllm-both",
	// "vllm-reasoning", "sglang" or "llama-server" (see shapes.go).
	Server string `json:"server,omitempty"`
	Turns  []Turn `json:"turns"`
}

// Turn is the reply to one request. With Status (non-200) the reply is an error
// (ErrorBody, default an OpenAI-style error object); with Drop the connection is
// closed without reply (a transport error); with RawBody that text is sent verbatim;
// otherwise a completion is built from Content, ReasoningContent, ToolCalls,
// FinishReason and Usage.
type Turn struct {
	// Comment is for human readers.
	Comment string  `json:"comment,omitempty"`
	Expect  *Expect `json:"expect,omitempty"`

	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	ErrorBody  string `json:"error_body,omitempty"`
	Drop       bool   `json:"drop,omitempty"`
	// ContextOverflow answers with the server's own refusal of a prompt over its context
	// (HTTP 400, in the shape of Script.Server).
	ContextOverflow bool   `json:"context_overflow,omitempty"`
	RawBody         string `json:"raw_body,omitempty"`
	// Delay holds the reply (a Go duration, e.g. "10s"); it ends early when the
	// request is cancelled, which the server counts (see Server.Cancelled).
	Delay string `json:"delay,omitempty"`

	// Content is sent as null when empty and the turn has tool calls (as vLLM does).
	Content          string `json:"content,omitempty"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string     `json:"finish_reason,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	// Usage is omitted from the reply when nil.
	Usage *Usage `json:"usage,omitempty"`
}

// ToolCall is one scripted tool call. ID defaults to "call_T_I" (turn, index).
type ToolCall struct {
	ID        string    `json:"id,omitempty"`
	Name      string    `json:"name"`
	Arguments Arguments `json:"arguments"`
}

// Arguments is the raw arguments string sent to the client. In a script it may be
// written as a JSON string (taken as is, so malformed arguments can be scripted) or
// as a JSON object (sent as its compact text), which reads better.
type Arguments string

// UnmarshalJSON accepts a string or any other JSON value.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Arguments(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = Arguments(buf.String())
	return nil
}

// Usage is the usage object of a reply.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails is sent when set (prompt_tokens_details.cached_tokens).
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is OpenAI's breakdown of the prompt tokens.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Expect holds assertions on the incoming request; zero fields are not checked.
type Expect struct {
	// MessageCount is the exact number of messages.
	MessageCount int `json:"message_count,omitempty"`
	// ToolCount is the exact number of tool schemas.
	ToolCount int `json:"tool_count,omitempty"`
	// LastRole is the role of the last message.
	LastRole string `json:"last_role,omitempty"`
	// LastToolContains: the tool messages after the last assistant message, joined,
	// contain each of these strings.
	LastToolContains []string `json:"last_tool_contains,omitempty"`
	// ToolMessages is the exact number of tool messages after the last assistant message.
	ToolMessages int `json:"tool_messages,omitempty"`
	// UserContains: the first user message contains each of these strings.
	UserContains []string `json:"user_contains,omitempty"`
	// UserNotContains: the first user message contains none of these strings. Prompt-injection
	// scripts use it to prove that text hidden from a human reader (an HTML comment, invisible
	// or bidi characters, written with JSON's \u escapes) never reached the model.
	UserNotContains []string `json:"user_not_contains,omitempty"`
	// AssistantReasoning is the exact reasoning of the last assistant message, read from
	// the field the server reads it from (reasoning_content, or reasoning for
	// "vllm-reasoning").
	AssistantReasoning string `json:"assistant_reasoning,omitempty"`
}

// Load reads a script from a JSON file, failing the test on any error, an unknown
// field (a typo would silently disable an assertion) or an unreadable Delay.
func Load(t testing.TB, path string) Script {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("leaftest: reading script: %v", err)
	}
	s, err := Parse(b)
	if err != nil {
		t.Fatalf("leaftest: script %s: %v", path, err)
	}
	return s
}

// LoadModel loads testdata/models/NAME from the module root (found by walking up to
// go.mod from the test's working directory), so any package can share the scripts.
func LoadModel(t testing.TB, name string) Script {
	t.Helper()
	return Load(t, filepath.Join(ModelsDir(t), name))
}

// ModelsDir returns the module's testdata/models directory.
func ModelsDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("leaftest: finding the working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "models")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("leaftest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Parse decodes and checks a script.
func Parse(b []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("decoding script: %w", err)
	}
	if len(s.Turns) == 0 {
		return Script{}, fmt.Errorf("script has no turns")
	}
	if !serverShapes[s.Server] {
		return Script{}, fmt.Errorf("unknown server %q", s.Server)
	}
	for i, turn := range s.Turns {
		if turn.Delay != "" {
			if _, err := time.ParseDuration(turn.Delay); err != nil {
				return Script{}, fmt.Errorf("turn %d: delay: %w", i, err)
			}
		}
		if turn.Expect != nil {
			for _, banned := range turn.Expect.UserNotContains {
				if banned == "" {
					// "" is in every text: the assertion could never pass.
					return Script{}, fmt.Errorf("turn %d: user_not_contains holds an empty string", i)
				}
			}
		}
		for j, c := range turn.ToolCalls {
			if c.Name == "" {
				return Script{}, fmt.Errorf("turn %d: tool call %d has no name", i, j)
			}
		}
	}
	return s, nil
}
