package runner

import (
	"time"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/egress"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
	"github.com/frognano/frognano/runner/verify"
)

// Result is what one run produced. Everything in it that came out of the sandbox or the
// model (the final message, observations, test output, the patch) is untrusted text.
type Result struct {
	RunID      string
	InstanceID string
	Task       string
	BaseCommit string
	Model      string // the served model name
	// ModelName is the operator's name of the model server that ran (Spec.Model); "" when the
	// run used Config.Leaf's (a local run).
	ModelName string
	// EscalatedFrom names the model whose attempts all failed the tests before this model
	// (ModelName) tried (Models.EscalateTo); "": no escalation.
	EscalatedFrom string
	// Escalation is the first model's result when this one escalated from it (its usage is
	// the run's too); nil otherwise.
	Escalation  *Result
	TestCommand string // "" when no test command was given or detected
	StartedAt   time.Time
	Elapsed     time.Duration

	// Environment is the image the run's sandboxes were made from and how it came to be
	// (cached, built by this run's setup, or the base image); nil when the run ended before.
	Environment *env.Environment
	// SetupFailed says why the repository's setup script failed, or why the seal check refused
	// what it built (Refused.Environment); the run then ended before the model was called (Leaf
	// is nil), and Environment.Setup holds its log.
	SetupFailed string
	// Refused is why a check refused the agent's patch (Patch is nil, PatchLost is
	// NoPatchRefused) or the environment setup built (with SetupFailed): a sentence and the
	// places named, for the report. nil when nothing was refused, and for the secrets check's
	// findings, which SecretFindings lists.
	Refused *Refusal

	Leaf      *leaf.Result
	Cancelled bool

	RawPatchBytes int64
	// MaxPatchBytes is the patch size limit the run applied (Config.MaxPatchBytes): over it
	// the patch is only reported. 0 stands for patch.DefaultMaxBytes.
	MaxPatchBytes int64
	Patch         *patch.Checked // nil when the patch could not be taken or was refused (see Notes)
	// PatchLost says why a patch the agent made is not Patch: NoPatchNotTaken or NoPatchRefused
	// (the Notes say more); "" when there was none to lose.
	PatchLost string

	TestsBefore *TestRun
	TestsAfter  *TestRun // nil when there was no patch to test
	Comparison  *verify.Comparison

	Notes []string // facts a reviewer must know (patch refused, OOM, ...)
	// SecretFindings is what check/secrets found in the files the patch publishes and blames
	// on it, by rule, file and line (never a value): under FROGNANO_SECRETS=block the patch was
	// refused for them (Patch is nil).
	SecretFindings []secrets.Finding
	// SecretsAllowed is what check/secrets found there and did not blame on the patch, each
	// with why (Finding.Allowed): already in the base's file, or let through by the base's
	// .gitleaks.toml or .gitleaksignore, or a placeholder by gitleaks' rules.
	SecretsAllowed []secrets.Finding
	// Dependencies is what the patch does to the repository's dependency manifests and lock
	// files and the files they include (check/deps): packages added, removed or changed and
	// where they come from, the index settings, what could not be read, their known
	// vulnerabilities when FROGNANO_OSV_DIR is set, and whether the environment the tests ran
	// in had them. nil when the patch touches no manifest nor a file one includes (or was
	// refused).
	Dependencies *deps.Report

	// Scanners is what the operator's scanners (FROGNANO_SCANNERS) found on the lines the
	// patch added or changed, one entry per scanner in the configured order, each saying
	// whether its SARIF was read; nil when none is configured or there was no patch to scan.
	Scanners []audit.ScannerRun
	// ScannerFailLevel is the level at or above which a scanner's finding fails the check run
	// (FROGNANO_SCANNER_FAIL_LEVEL; "" the default).
	ScannerFailLevel scanner.FailLevel
	// Suppressions are the comments on the lines the patch added or changed that tell a
	// scanner to skip findings (# nosec, nosemgrep, eslint-disable, ...), whether or not any
	// scanner is configured; SuppressionsMore counts those past scanner.MaxSuppressions. nil
	// when the patch adds none or was not kept.
	Suppressions     []scanner.Suppression
	SuppressionsMore int

	// Egress is what the offline sandbox stopped: the names the model's commands tried to
	// resolve, connections with no route, commands not found, and what to do (runner/egress);
	// nil when the agent's sandbox was never made.
	Egress *egress.Report

	// EarlierTestInfluences is what a follow-up's branch changed before this run (earlier
	// runs' patches, reviewers' commits) that can change what the tests report: the tests,
	// before and after, ran under it. TestTrust reports it with the patch's own.
	EarlierTestInfluences []patch.TestInfluence

	// Attempts is every attempt of a run of several (RunAttempts), this one among them;
	// nil for a run of one.
	Attempts *AttemptSet

	// SandboxUsage is the CPU time and peak memory of the sandboxes this attempt made
	// (complete once Run has returned); Usage sums a run's.
	SandboxUsage *sandbox.Usage
}

// PatchBytes returns the usable patch, or nil when there is none (empty, refused, or too large).
func (r *Result) PatchBytes() []byte {
	if r == nil || r.Patch == nil || r.Patch.TooLarge || len(r.Patch.Diff) == 0 {
		return nil
	}
	return r.Patch.Diff
}

// Why a run has no usable patch (Result.NoPatch).
const (
	NoPatchUnchanged = "unchanged" // the agent changed no file
	NoPatchNotTaken  = "not_taken" // the patch could not be taken out of the sandbox
	NoPatchRefused   = "refused"   // a check refused it: the Notes say which and why
	NoPatchTooLarge  = "too_large" // over the patch size limit: only reported
	NoPatchSetup     = "setup"     // setup failed, so the model was not called
)

// NoPatch says why the run has no usable patch (PatchBytes is nil), "" when it has one. A
// caller tells the maintainer from it, never from the Notes' text.
func (r *Result) NoPatch() string {
	switch {
	case r.PatchBytes() != nil:
		return ""
	case r.SetupFailed != "":
		return NoPatchSetup
	case r.PatchLost != "":
		return r.PatchLost
	case r.Patch != nil && r.Patch.TooLarge:
		return NoPatchTooLarge
	}
	return NoPatchUnchanged
}

// ExitSetupFailed is the exit reason of a run whose setup script failed.
const ExitSetupFailed = "setup_failed"

// ExitEnvironmentRefused is the exit reason of a run whose environment the seal check refused:
// setup left a value the operator passes it (runner/env's seal check), whatever its exit status.
const ExitEnvironmentRefused = "environment_refused"

// EnvironmentRefused reports whether the seal check refused the environment setup built.
func (r *Result) EnvironmentRefused() bool {
	return r != nil && r.SetupFailed != "" && r.Refused != nil && r.Refused.Environment
}

// ExitReason returns the loop's exit reason ("cancelled" when the run was cancelled,
// ExitSetupFailed when setup failed, ExitEnvironmentRefused when the seal check refused it).
func (r *Result) ExitReason() string {
	if r.Cancelled {
		return leaf.ExitCancelled
	}
	if r.EnvironmentRefused() {
		return ExitEnvironmentRefused
	}
	if r.SetupFailed != "" {
		return ExitSetupFailed
	}
	if r.Leaf == nil {
		return ""
	}
	return r.Leaf.ExitReason
}

// TestTime is the time spent running the repository's tests (both runs, summed).
func (r *Result) TestTime() time.Duration {
	var d time.Duration
	for _, t := range []*TestRun{r.TestsBefore, r.TestsAfter} {
		if t != nil {
			d += t.Duration
		}
	}
	return d
}

// Trajectory returns the run in the reference trajectory format.
func (r *Result) Trajectory() leaf.Trajectory {
	lr := r.Leaf
	if lr == nil {
		lr = &leaf.Result{ExitReason: r.ExitReason()}
	}
	return lr.Trajectory(r.RunID, r.InstanceID, 0, string(r.PatchBytes()), r.Cancelled)
}

// SetupLog returns the output of the setup script this run ran (redacted, the end of it), or
// nil when no setup ran in this run.
func (r *Result) SetupLog() []byte {
	if r == nil || r.Environment == nil || r.Environment.Setup == nil {
		return nil
	}
	return r.Environment.Setup.Log
}

// TestTrust returns the files of the patch that can change what the tests report without
// changing the code under test (patch.TestInfluencesFor, with the run's test command): when
// there are any, the test result may not be trustworthy.
func (r *Result) TestTrust() []patch.TestInfluence {
	if r == nil || r.Patch == nil {
		return nil
	}
	out := patch.TestInfluencesFor(r.Patch.Files, r.TestCommand)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Path] = true
	}
	for _, t := range r.EarlierTestInfluences {
		if !seen[t.Path] {
			seen[t.Path] = true
			out = append(out, patch.TestInfluence{Path: t.Path, Why: "changed by an earlier commit on this pull request: " + t.Why})
		}
	}
	return out
}

// NewTests returns the test files the patch adds that only add tests (patch.Trust): they
// raise no doubt about the result and are listed as new tests, to be read with the change.
func (r *Result) NewTests() []patch.NewTest {
	if r == nil || r.Patch == nil {
		return nil
	}
	_, tests := patch.Trust(r.Patch.Files, r.TestCommand)
	return tests
}
