package export

import (
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/runner/leaf"
)

// Redactor is what every text of an export passes on its way out, whatever was redacted when
// the run was stored (an old row, a rule added since, an operator value set since): the
// operator's values in every form secretform knows (as written, as JSON spells them, base64,
// hex, URL-encoded, ...), then githubapp.Redact (GitHub tokens, URL credentials, the secrets
// this process registered), then gitleaks' rules (check/secrets). The operator's values go
// first, so that no other rule cuts one in a way that leaves a piece of it.
type Redactor struct {
	values *secretform.Matcher
	// memo holds what this Redactor already redacted (a trajectory's steps repeat its
	// messages); nil: none. A Redactor with a memo is for one goroutine and one record.
	memo map[string]string
}

// forRecord returns a Redactor for one record: the same rules, with a memo of its own.
func (r *Redactor) forRecord() *Redactor {
	return &Redactor{values: r.values, memo: map[string]string{}}
}

// memoized returns f(s), from the memo when it was asked before (key tells the kinds apart).
func (r *Redactor) memoized(key byte, s string, f func(string) string) string {
	if r.memo == nil {
		return f(s)
	}
	k := string(key) + s
	if v, ok := r.memo[k]; ok {
		return v
	}
	v := f(s)
	r.memo[k] = v
	return v
}

// NewRedactor returns the Redactor of the operator's values vals.
func NewRedactor(vals []secretform.Secret) *Redactor {
	return &Redactor{values: secretform.New(vals)}
}

// Text redacts one text.
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	return r.memoized('t', s, r.text)
}

func (r *Redactor) text(s string) string {
	if !r.values.Empty() {
		s = r.values.Mask(s)
	}
	return secrets.Redact(githubapp.Redact(s))
}

// Arguments redacts a tool call's arguments, a JSON text whose strings gitleaks' rules read
// decoded (secrets.RedactArguments).
func (r *Redactor) Arguments(s string) string {
	if s == "" {
		return s
	}
	return r.memoized('a', s, r.arguments)
}

func (r *Redactor) arguments(s string) string {
	if !r.values.Empty() {
		s = r.values.Mask(s)
	}
	return secrets.RedactArguments(githubapp.Redact(s))
}

// Message returns a redacted copy of m: its content, reasoning and tool calls (the model
// chose their ids and names too).
func (r *Redactor) Message(m leaf.Message) leaf.Message {
	return m.MapTexts(r.Text, r.Arguments)
}

// Trajectory redacts every text of t in place: messages, steps, final message, error, the
// output patch (a patch holding a secret is never published, but a text is never trusted to
// be what it should be), and the ids (the instance id holds a repository's name, which the
// operator named).
func (r *Redactor) Trajectory(t *leaf.Trajectory) {
	for i, m := range t.Messages {
		t.Messages[i] = r.Message(m)
	}
	for i, s := range t.Steps {
		t.Steps[i] = s.MapTexts(r.Text, r.Arguments)
	}
	t.FinalMessage = r.Text(t.FinalMessage)
	if t.Error != nil {
		e := r.Text(*t.Error)
		t.Error = &e
	}
	t.OutputPatch = r.Text(t.OutputPatch)
	t.TrajectoryID, t.InstanceID = r.Text(t.TrajectoryID), r.Text(t.InstanceID)
}
