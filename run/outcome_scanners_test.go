package run

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
)

// TestOutcomeCarriesScannerAnnotations: the check run an outcome publishes holds the
// scanners' findings as annotations, redacted, and fails at the fail level; stored as JSON
// (a retried publish reads it back) they come back whole.
func TestOutcomeCarriesScannerAnnotations(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("b", 36)
	res := &runner.Result{RunID: "run-2", ScannerFailLevel: scanner.FailError, Scanners: []audit.ScannerRun{{Name: "sast", ExitCode: 1,
		Findings: scanner.Findings{Kept: []scanner.Finding{{Rule: "r1", Level: scanner.LevelError, Message: "leaks " + token, File: "a.py", Line: 4, EndLine: 4}}}}}}
	out, err := OutcomeOf(res, RunSpec{Issue: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Check
	want := githubapp.CheckAnnotation{Path: "a.py", StartLine: 4, EndLine: 4, Level: "failure", Message: "leaks [REDACTED]", Title: "sast: r1",
		RawDetails: "scanner: sast\nrule: r1\nSARIF level: error"}
	if c == nil || c.Conclusion != "failure" || len(c.Annotations) != 1 || c.Annotations[0] != want {
		t.Fatalf("check run = %+v, want one annotation %+v", c, want)
	}
	stored, _ := json.Marshal(c)
	var back githubapp.CheckRun
	if err := json.Unmarshal(stored, &back); err != nil || len(back.Annotations) != 1 || back.Annotations[0] != want {
		t.Errorf("stored and read back: %+v, %v", back.Annotations, err)
	}
}
