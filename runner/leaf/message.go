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
	// ReasoningField is the key ReasoningContent is sent back under: "" for
	// "reasoning_content", the reference's (vLLM before its rename, SGLang, llama.cpp's
	// llama-server), or ReasoningKey when the server gave the reasoning only as
	// "reasoning" (vLLM since it renamed the field), which is also the only key such a
	// server reads back into its chat template.
	ReasoningField string `json:"-"`
}

// ReasoningKey is the field newer vLLM servers use for the reasoning, in replies and in
// the assistant messages they read.
const ReasoningKey = "reasoning"

// reasoningKey is the key m's reasoning is written under.
func (m Message) reasoningKey() string {
	if m.ReasoningField == ReasoningKey {
		return ReasoningKey
	}
	return "reasoning_content"
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
	// notText: the server sent the arguments as a JSON value other than a string (kept
	// in Arguments as compact JSON). The reference's json.loads raises TypeError on such
	// a value and calls the tool with {}; so does the loop (ToolArguments).
	notText bool
}

// ToolArguments is the arguments string the tool receives: what the model produced, or
// "" (which the executor reads as {}) when the server did not send a string.
func (f FunctionCall) ToolArguments() string {
	if f.notText {
		return ""
	}
	return f.Arguments
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
// {"role","content",["tool_calls"],["reasoning_content"]}, the reasoning under
// "reasoning" instead when the server named it so (ReasoningField).
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Role == "tool" {
		return json.Marshal(struct {
			Role       string  `json:"role"`
			ToolCallID string  `json:"tool_call_id"`
			Content    *string `json:"content"`
		}{m.Role, m.ToolCallID, m.Content})
	}
	if m.reasoningKey() == ReasoningKey {
		return json.Marshal(struct {
			Role      string     `json:"role"`
			Content   *string    `json:"content"`
			ToolCalls []ToolCall `json:"tool_calls,omitempty"`
			Reasoning string     `json:"reasoning,omitempty"`
		}{m.Role, m.Content, m.ToolCalls, m.ReasoningContent})
	}
	return json.Marshal(struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
	}{m.Role, m.Content, m.ToolCalls, m.ReasoningContent})
}

// UnmarshalJSON reads what MarshalJSON writes (a stored trajectory), keeping the key the
// reasoning came under.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent *string    `json:"reasoning_content"`
		Reasoning        *string    `json:"reasoning"`
		ToolCalls        []ToolCall `json:"tool_calls"`
		ToolCallID       string     `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: w.Content, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	m.ReasoningContent, m.ReasoningField = pickReasoning(w.ReasoningContent, w.Reasoning)
	return nil
}

// pickReasoning chooses the reasoning of a message that may carry it as
// "reasoning_content", as "reasoning", or (vLLM between the two) as both: the reference
// reads reasoning_content; "reasoning" is used only when that is absent or empty, and is
// then the key to send it back under.
func pickReasoning(reasoningContent, reasoning *string) (text, field string) {
	if reasoningContent != nil && *reasoningContent != "" {
		return *reasoningContent, ""
	}
	if reasoning != nil && *reasoning != "" {
		return *reasoning, ReasoningKey
	}
	return "", ""
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
	// CachedTokens is the part of PromptTokens the server served from its prompt cache
	// (usage.prompt_tokens_details.cached_tokens), summed; 0 when it never said.
	CachedTokens int
	Elapsed      time.Duration
	ModelTime    time.Duration
	ToolTime     time.Duration
}

// MapTexts returns a copy of m in which every text the model chose passes through a function:
// the content, the reasoning, the tool call id, and each tool call's id and name through text,
// each tool call's arguments (a JSON text) through args. It shares nothing it changed with m.
// The redactions of what frognano shows and exports are made with it.
func (m Message) MapTexts(text, args func(string) string) Message {
	if m.Content != nil {
		c := text(*m.Content)
		m.Content = &c
	}
	m.ReasoningContent = text(m.ReasoningContent)
	m.ToolCallID = text(m.ToolCallID)
	if m.ToolCalls != nil {
		calls := make([]ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			// The model chooses the id and the name as well (an unknown tool's name is shown).
			tc.ID, tc.Function.Name = text(tc.ID), text(tc.Function.Name)
			tc.Function.Arguments = args(tc.Function.Arguments)
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	return m
}

// MapTexts returns a copy of s whose assistant message is mapped as Message.MapTexts maps it
// and whose observations (tool and text) pass through text. It shares nothing it changed with s.
func (s Step) MapTexts(text, args func(string) string) Step {
	s.Assistant, s.Observations = s.Assistant.MapTexts(text, args), mapObservations(s.Observations, text)
	return s
}

// MapTexts is Step.MapTexts for a step of a trajectory.
func (s TrajectoryStep) MapTexts(text, args func(string) string) TrajectoryStep {
	s.Assistant, s.Observations = s.Assistant.MapTexts(text, args), mapObservations(s.Observations, text)
	return s
}

// mapObservations returns a copy of obs (nil stays nil) whose tools and texts passed through text.
func mapObservations(obs []Observation, text func(string) string) []Observation {
	if obs == nil {
		return nil
	}
	out := make([]Observation, len(obs))
	for i, o := range obs {
		out[i] = Observation{Tool: text(o.Tool), Observation: text(o.Observation)}
	}
	return out
}
