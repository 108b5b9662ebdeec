package leaf

import (
	"encoding/json"
	"time"
)

// Message is one chat message, with the reference's fields and nothing else.
// Content is a pointer because the reference keeps an assistant's null content as
// null (a tool-calling turn usually has none); system, user and tool messages always
// carry a string.
type Message struct {
	Role             string     `json:"role"`
	Content          *string    `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call requested by the model, in OpenAI's shape.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function part of a ToolCall. Arguments is the raw string the
// model produced; it may be malformed JSON, and is kept as is.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Text returns the content, or "" when it is null.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

func textMessage(role, content string) Message {
	return Message{Role: role, Content: &content}
}

// MarshalJSON writes the message as the reference builds its dicts: tool messages are
// {"role","tool_call_id","content"} (tool_call_id always present), the others
// {"role","content",["tool_calls"],["reasoning_content"]}.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Role == "tool" {
		return json.Marshal(struct {
			Role       string  `json:"role"`
			ToolCallID string  `json:"tool_call_id"`
			Content    *string `json:"content"`
		}{m.Role, m.ToolCallID, m.Content})
	}
	return json.Marshal(struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
	}{m.Role, m.Content, m.ToolCalls, m.ReasoningContent})
}

// Observation is what one tool call returned.
type Observation struct {
	Tool        string `json:"tool"`
	Observation string `json:"observation"`
}

// Step is one completed model turn and the tool calls it made.
type Step struct {
	// Index is 0-based, as the reference's "step".
	Index        int
	Assistant    Message
	Observations []Observation
	// ModelTime is the time spent in the model request (retries and waits included).
	ModelTime time.Duration
	ToolTime  time.Duration
	// ContextTokens is the context accounting after this step.
	ContextTokens int
	// Elapsed is the time since the run started, at the end of this step.
	Elapsed time.Duration
}

// Result is the outcome of Run. It is always complete enough to write a trajectory.
type Result struct {
	// Messages is the whole conversation: system, user, then assistant and tool messages.
	Messages []Message
	// Steps holds the completed steps; a turn that failed (model error, tool_error) is
	// not a step, as in the reference.
	Steps []Step
	// NSteps counts the model turns started, the reference's n_steps (it includes a
	// final query that failed).
	NSteps     int
	ExitReason string
	// Error is set for llm_query_error and tool_error only.
	Error        string
	FinalMessage string
	// ContextTokens is the reference's context accounting: the server's usage total of
	// the last turn plus the estimated tokens of the tool messages since.
	ContextTokens int
	// PromptTokens and CompletionTokens are summed over every turn's usage.
	PromptTokens     int
	CompletionTokens int
	Elapsed          time.Duration
	ModelTime        time.Duration
	ToolTime         time.Duration
}
