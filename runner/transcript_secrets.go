package runner

import (
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/runner/leaf"
)

// What frognano shows of a run besides the patch (its steps as they happen, the trajectory, the
// transcript in the pull request, the report) holds no value gitleaks' rules take for a
// secret: the patch check keeps one out of the repository, and these keep it out of
// everything else frognano writes. The model itself saw every text as it was; only the copies
// frognano shows are redacted.

// redactingSteps returns onStep given a redacted copy of each step (nil stays nil). The loop
// keeps its own messages, which the model's next request holds, untouched.
func redactingSteps(onStep func(leaf.Step)) func(leaf.Step) {
	if onStep == nil {
		return nil
	}
	return func(s leaf.Step) { onStep(redactedStep(s)) }
}

func redactedStep(s leaf.Step) leaf.Step {
	s.Assistant = redactedMessage(s.Assistant)
	obs := make([]leaf.Observation, len(s.Observations))
	for i, o := range s.Observations {
		obs[i] = leaf.Observation{Tool: secrets.Redact(o.Tool), Observation: secrets.Redact(o.Observation)}
	}
	if s.Observations != nil {
		s.Observations = obs
	}
	return s
}

// redactedMessage returns a copy of m with its texts and tool calls' arguments redacted; it
// shares nothing that it changed with m.
func redactedMessage(m leaf.Message) leaf.Message {
	if m.Content != nil {
		c := secrets.Redact(*m.Content)
		m.Content = &c
	}
	m.ReasoningContent = secrets.Redact(m.ReasoningContent)
	m.ToolCallID = secrets.Redact(m.ToolCallID)
	if m.ToolCalls != nil {
		calls := make([]leaf.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			// The model chooses the id and the name as well (an unknown tool's name is shown).
			tc.ID, tc.Function.Name = secrets.Redact(tc.ID), secrets.Redact(tc.Function.Name)
			tc.Function.Arguments = secrets.RedactArguments(tc.Function.Arguments)
			calls[i] = tc
		}
		m.ToolCalls = calls
	}
	return m
}

// redactLoopResult redacts, in place, what the finished loop's result shows: its messages,
// steps, final message and error. The loop is over: nothing sends them to the model again.
func redactLoopResult(r *leaf.Result) {
	if r == nil {
		return
	}
	for i, m := range r.Messages {
		r.Messages[i] = redactedMessage(m)
	}
	for i, s := range r.Steps {
		r.Steps[i] = redactedStep(s)
	}
	r.FinalMessage = secrets.Redact(r.FinalMessage)
	r.Error = secrets.Redact(r.Error)
}
