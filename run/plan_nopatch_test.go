package run

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/runner"
)

// TestNoPatchNoteOfSetup: a follow-up whose setup failed, or whose environment the seal check
// refused, says which in the note above its summary; before, both read "The run has no patch
// to publish", and a refusal read like a failure.
func TestNoPatchNoteOfSetup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		exit, want string
	}{
		{runner.ExitSetupFailed, "The repository's setup script failed, so the model was not called"},
		{runner.ExitEnvironmentRefused, "frognano refused the environment the repository's setup script built"},
	} {
		got := noPatchNote(&row{NoPatch: runner.NoPatchSetup, ExitReason: tc.exit}, ", so nothing was pushed.")
		if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, ", so nothing was pushed.") {
			t.Errorf("%s: %q, want %q…", tc.exit, got, tc.want)
		}
	}
}
