package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
)

// writeSetupFailure says, first, that the repository's setup script failed (why, its exit
// status), or that the seal check refused what it built (report_refusal.go), and the last lines
// of its log (the repository's text: in a code block, redacted).
func (x *render) writeSetupFailure(b *strings.Builder) {
	r := x.r
	if r.SetupFailed == "" {
		return
	}
	if r.EnvironmentRefused() {
		x.writeEnvironmentRefusal(b) // refusal.go
	} else {
		b.WriteString("## Setup failed\n\n")
		fmt.Fprintf(b, "The repository's setup script (%s, from the base commit) failed, so the run ended before the model was called: %s.\n\n",
			codeSpan(env.ScriptFile, 60), prose(x.redact(r.SetupFailed), x.d.note))
	}
	var run *env.SetupRun
	if r.Environment != nil {
		run = r.Environment.Setup
	}
	if run == nil {
		return
	}
	status := fmt.Sprint(run.ExitCode)
	if run.TimedOut {
		status = "timed out"
	}
	if r.EnvironmentRefused() {
		// The script did its work; what it left is what was refused.
		fmt.Fprintf(b, "- The setup script: exit status %s, %s, network %s\n\n", status, roundDur(run.Duration), codeSpan(run.Network, 100))
	} else {
		fmt.Fprintf(b, "- Exit status: %s\n- Duration: %s\n- Network: %s\n\n", status, roundDur(run.Duration), codeSpan(run.Network, 100))
	}
	tail := env.LastLines(run.Log, x.d.setupLines)
	if tail == "" {
		return
	}
	fmt.Fprintf(b, "Last lines of its log (the whole log is kept with the run):\n\n%s\n", codeBlock(truncateTail(x.redact(tail), x.d.setupChars), "text"))
}

// writeEnvironment says which image the run's sandboxes were made from, and how.
func (x *render) writeEnvironment(b *strings.Builder) {
	e := x.r.Environment
	if e == nil {
		return
	}
	b.WriteString("## Environment\n\n")
	fmt.Fprintf(b, "- Base image: %s\n", codeSpan(e.BaseImage, 200))
	switch {
	case e.Key == "":
		fmt.Fprintf(b, "- Environment: the base image (%s)\n", prose(e.Why, 100))
	case x.r.EnvironmentRefused():
		fmt.Fprintf(b, "- Environment: none, refused by the seal check (key %s)\n", codeSpan(e.Key[:16], 20))
	case x.r.SetupFailed != "":
		fmt.Fprintf(b, "- Environment: none, setup failed (key %s)\n", codeSpan(e.Key[:16], 20))
	default:
		how := "built by this run's setup"
		if e.Cached {
			how = "cached; no setup ran in this run"
		}
		fmt.Fprintf(b, "- Environment: %s (%s), image %s\n", codeSpan(e.Ref, 100), how, codeSpan(e.Image, 80))
	}
	if s := e.Setup; s != nil && x.r.SetupFailed == "" {
		fmt.Fprintf(b, "- Setup: %s on network %s\n", roundDur(s.Duration), codeSpan(s.Network, 100))
	}
	switch in := e.Inputs; {
	case e.Key == "":
	case in.Listed && len(in.Files) > 0:
		fmt.Fprintf(b, "- Setup inputs in the key: %s\n", x.codeList(in.Paths(), x.d.files))
	case in.Listed:
		fmt.Fprintf(b, "- Setup inputs in the key: none of the files %s lists is in the commit\n", codeSpan(env.InputsFile, 40))
	default:
		fmt.Fprintf(b, "- Setup input: the whole commit %s (no %s: the environment is built again for each new commit)\n",
			codeSpan(shortCommit(in.Commit), 20), codeSpan(env.InputsFile, 40))
	}
	b.WriteString("\n")
}

// EnvironmentLine is one line for a run's record and `frognano run`'s summary: the image its
// sandboxes were made from and how ("frognano-env:KEY on frognano-sandbox:latest, cached");
// empty when the run ended before it had one.
func EnvironmentLine(r *runner.Result) string {
	e := r.Environment
	switch {
	case e == nil:
		return ""
	case r.EnvironmentRefused():
		return fmt.Sprintf("%s, environment refused", e.BaseImage)
	case r.SetupFailed != "":
		return fmt.Sprintf("%s, setup failed", e.BaseImage)
	case e.Key == "":
		return fmt.Sprintf("%s (%s)", e.BaseImage, e.Why)
	case e.Cached:
		return fmt.Sprintf("%s on %s, cached (no setup ran)", e.Ref, e.BaseImage)
	}
	return fmt.Sprintf("%s on %s, built by this run's setup in %s", e.Ref, e.BaseImage, roundDur(e.Setup.Duration))
}

// shortCommit is a commit id's first 12 characters.
func shortCommit(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
