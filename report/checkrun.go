package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/verify"
)

// CheckRunName is the name of the check run each published run reports its tests in.
const CheckRunName = "frognano / tests"

// checkOutputLimit is the most characters GitHub accepts in a check run's output summary,
// and separately in its text.
const checkOutputLimit = 65535

// Check run conclusions frognano reports (a subset of the Checks API's).
const (
	CheckSuccess = "success"
	CheckFailure = "failure"
	CheckNeutral = "neutral"
)

// CheckReport is what the check run `frognano / tests` says about a run's tests: a
// conclusion judged from the after-run alone (the run frognano made, never the model), and
// markdown that is redacted, inert and within the Checks API's limits.
type CheckReport struct {
	Conclusion string `json:"conclusion"` // CheckSuccess, CheckFailure or CheckNeutral
	Title      string `json:"title"`      // one line, no markup
	Summary    string `json:"summary"`    // the before/after table and the lists
	Text       string `json:"text"`       // the failing tests and the end of the after-run's output
	// Annotations are the operator's scanners' findings on the lines the patch changed
	// (scanners.go); GitHub takes 50 a request.
	Annotations []CheckAnnotation `json:"annotations,omitempty"`
}

// Check judges the after-run and renders the check run. Success: the after-run ran, broke
// nothing and every test passes, or it broke nothing and fixed at least one test that
// failed before (what the task targeted). Failure: a test that did not fail before fails
// with the patch (or, without per-test results, the command passed before and fails after).
// Neutral, with why: no test command, a test run that could not be carried out, or no test
// whose result shows the change (still failing and nothing fixed). Whatever the tests say, a
// finding of the operator's scanners at or above FROGNANO_SCANNER_FAIL_LEVEL on a line the
// patch changed makes it a failure (scanners.go). redact is applied to every untrusted
// string (nil: none).
func Check(r *runner.Result, redact func(string) string) CheckReport {
	conclusion, title := judge(r)
	conclusion, title = judgeScanners(r, conclusion, title)
	annotations := Annotations(r, redact)
	// A known vulnerability of a new dependency version does not change the conclusion, which
	// judges the tests (the check's name); the title says it and the summary's warning is at
	// the top (docs/security.md says why).
	title += depsTitle(r)
	for level := range details {
		x := newRender(r, redact, level)
		var sum strings.Builder
		if conclusion == CheckNeutral {
			fmt.Fprintf(&sum, "**Why neutral:** %s\n\n", prose(title, 300))
		}
		x.writeTrust(&sum)
		x.writeDepsWarning(&sum)
		writeCounts(&sum, r.Comparison)
		s := *x
		s.d.tail = 0 // the output's end is in the text, once
		s.writeTests(&sum)
		x.writeDependencies(&sum)
		x.writeSecrets(&sum)
		x.writeScanners(&sum, false)
		x.writeSuppressions(&sum)
		writeUsage(&sum, r.Usage()) // issue 22: what the run used (runner.Result.Usage)
		// Each untrusted piece was redacted; the whole is too, as GitHub gets it: a secret
		// can span pieces (a key whose lines are the names of the tests the patch broke).
		summary, text := redact2(redact, sum.String()), redact2(redact, x.checkText())
		if runeLen(summary) <= checkOutputLimit && runeLen(text) <= checkOutputLimit {
			return CheckReport{Conclusion: conclusion, Title: title, Summary: summary, Text: text, Annotations: annotations}
		}
	}
	return CheckReport{Conclusion: conclusion, Title: title, Summary: "The test results are too large to show here; they are in the pull request.", Text: "", Annotations: annotations}
}

// writeCounts puts the before/after comparison at the top of the summary as one table, zeros
// included, so a reviewer sees at a glance what the patch did to the tests (the lists follow
// in the tests section).
func writeCounts(b *strings.Builder, c *verify.Comparison) {
	if c == nil || !c.PerTest {
		return
	}
	fmt.Fprintf(b, "| fixed | broken | still failing | new |\n|---|---|---|---|\n| %d | %d | %d | %d |\n\n",
		len(c.Fixed), len(c.Broken), len(c.StillFailing), len(c.New))
}

func redact2(redact func(string) string, s string) string {
	if redact == nil {
		return s
	}
	return redact(s)
}

// judge returns the conclusion and a one-line title that says why.
func judge(r *runner.Result) (conclusion, title string) {
	after, before := r.TestsAfter, r.TestsBefore
	switch {
	case r.TestCommand == "":
		return CheckNeutral, "No tests were run: no test command was given or detected."
	case after == nil:
		return CheckNeutral, "The tests were not run with the patch."
	case after.Error != "":
		return CheckNeutral, "The tests could not be run with the patch."
	}
	c := r.Comparison
	if c != nil && c.PerTest {
		switch {
		case len(c.Broken) > 0:
			return CheckFailure, fmt.Sprintf("%d test(s) broken by the patch, %d fixed.", len(c.Broken), len(c.Fixed))
		case !after.Failed():
			return CheckSuccess, fmt.Sprintf("All %d test(s) pass with the patch; %d fixed.", c.AfterPassed, len(c.Fixed))
		case len(c.Fixed) > 0:
			return CheckSuccess, fmt.Sprintf("%d test(s) fixed, none broken; %d still failing as before.", len(c.Fixed), len(c.StillFailing))
		case len(c.StillFailing) > 0 && c.AfterFailed == len(c.StillFailing):
			return CheckNeutral, fmt.Sprintf("No test shows the change: nothing fixed or broken, %d still failing as before.", len(c.StillFailing))
		default:
			return CheckFailure, fmt.Sprintf("%d test(s) fail with the patch.", c.AfterFailed)
		}
	}
	beforeFailed := before == nil || before.Error != "" || before.Failed()
	switch {
	case !after.Failed():
		return CheckSuccess, "The tests pass with the patch (judged by the command's exit code)."
	case !beforeFailed:
		return CheckFailure, "The tests passed before the patch and fail with it (judged by the command's exit code)."
	default:
		return CheckNeutral, "The tests fail before and after the patch; the exit code cannot tell more."
	}
}

// checkText lists the failing tests of the after-run and the end of its output, as code.
// Per-test output is not kept, so the excerpt is the end of the whole run's output, where
// test runners print their failures' summary.
func (x *render) checkText() string {
	after := x.r.TestsAfter
	if after == nil || after.Error != "" || !after.Failed() {
		return ""
	}
	var b strings.Builder
	var failing []string
	for name, st := range after.Tests {
		if st == "fail" {
			failing = append(failing, name)
		}
	}
	if len(failing) > 0 {
		slices.Sort(failing)
		n := max(x.d.tests, 5)
		fmt.Fprintf(&b, "## Failing with the patch (%d)\n\n%s\n\n", len(failing), x.codeList(failing, n))
	}
	if after.Tail != "" {
		tail := max(x.d.tail, 2000)
		fmt.Fprintf(&b, "## End of the test output with the patch\n\n%s", codeBlock(truncateTail(x.redact(after.Tail), tail), "text"))
	}
	return b.String()
}
