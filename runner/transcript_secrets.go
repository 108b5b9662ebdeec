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
	return s.MapTexts(secrets.Redact, secrets.RedactArguments)
}

// redactedMessage returns a copy of m with its texts and tool calls' arguments redacted; it
// shares nothing that it changed with m.
func redactedMessage(m leaf.Message) leaf.Message {
	return m.MapTexts(secrets.Redact, secrets.RedactArguments)
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
