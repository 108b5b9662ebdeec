package run

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
)

// outcomeOf takes a run that ended at setup (no agent loop) without a panic: the summary says
// setup failed, the log is kept, redacted.
func TestOutcomeOfFailedSetup(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("a", 36)
	res := &runner.Result{
		RunID: "run-1", SetupFailed: "the setup script exited with status 2",
		Environment: &env.Environment{BaseImage: "frognano-sandbox:latest", Setup: &env.SetupRun{ExitCode: 2, Network: "bridge", Log: []byte("echo " + token + "\nboom\n")}},
	}
	out, err := OutcomeOf(res, RunSpec{Issue: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitReason != runner.ExitSetupFailed || out.Steps != 0 || len(out.Patch) != 0 {
		t.Errorf("outcome %+v", out)
	}
	if !strings.Contains(out.Summary, "## Setup failed") || !strings.Contains(out.Summary, "boom") || strings.Contains(out.Summary+out.SetupLog, token) {
		t.Errorf("summary %q, setup log %q: want the failure, redacted", out.Summary, out.SetupLog)
	}
	if out.Environment != "frognano-sandbox:latest, setup failed" {
		t.Errorf("environment %q", out.Environment)
	}
}
