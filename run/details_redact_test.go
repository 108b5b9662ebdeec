package run

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
)

// TestCIOutputRedactedAfterHiddenTextGoes: CI's output is the patch's (the model's)
// doing. A token that CI prints with invisible characters inside it is not one to the
// redactor; the task then removes the invisible characters, and the whole token would reach
// the model (and through it the patch). Redaction must come after the text is cleaned, as
// oneLine and the review comments do.
func TestCIOutputRedactedAfterHiddenTextGoes(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("A1b2C3d4E5", 4)
	split := token[:20] + "\u200b" + token[20:]
	// What githubapp.FailedChecks hands over: already redacted, which misses the split token.
	in := githubapp.Redact(split)
	if in != split {
		t.Fatalf("the redactor already sees the split token: %q", in)
	}
	checks := []githubapp.FailedCheck{{
		Name: "test", App: "github-actions", Conclusion: "failure",
		Summary: "summary " + in, Text: "text " + in, Log: "log " + in,
		Annotations: []githubapp.Annotation{{Path: "a.py", StartLine: 1, Level: "failure", Message: "message " + in, RawDetails: "details " + in}},
	}}
	out := RenderFailedChecks(strings.Repeat("a", 40), checks, 1)
	if strings.Contains(out, token) {
		t.Errorf("a whole token reached the task:\n%s", out)
	}
	for _, where := range []string{"summary", "text", "log", "message", "details"} {
		if !strings.Contains(out, where+" "+githubapp.Redacted) {
			t.Errorf("the %s's token is not redacted:\n%s", where, out)
		}
	}
}
