package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// TestPatchWrittenTextIsRedacted: a test the patch adds can print a key it assembles at run
// time (its file holds nothing gitleaks' rules read, so the scan passes it: check/secrets's
// TestKeyAssembledAtRunTimePassesTheScan), a test id or a path can spell one, and a scanner's
// message can quote one. None of them reaches what the run shows in clear: the PR body, the
// status summary, the stored report, the check run's text and annotations and the run page's
// tests event all pass gitleaks' rules (githubapp.RedactRun), not only GitHub's token forms.
func TestPatchWrittenTextIsRedacted(t *testing.T) {
	t.Parallel()
	aws := secrettest.AWSKey(t)
	awsSecret := secrettest.GenericSecret(t, 40)
	key, keyLines := secrettest.PrivateKey(t)
	tail := "FAILED tests/test_x.py::test_deploy - AssertionError\n" +
		"aws_access_key_id = " + aws + "\naws_secret_access_key = " + awsSecret + "\n" + key + "\n1 failed in 0.1s\n"
	testID := "tests/test_x.py::test_deploy[" + aws + "]"
	res := &runner.Result{
		RunID: "run-7", Model: "m", BaseCommit: "abc",
		Leaf:        &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "Done."},
		Patch:       &patch.Checked{Diff: []byte("diff"), Files: []patch.File{{OldPath: "ops/" + aws, NewPath: "ops/" + aws, Status: "added", Added: 1}}},
		TestCommand: "pytest",
		TestsBefore: &runner.TestRun{Outcome: verify.Outcome{Command: "pytest", ExitCode: 0, Duration: time.Second,
			Tests: map[string]verify.Status{"tests/test_x.py::test_ok": verify.Pass}}},
		TestsAfter: &runner.TestRun{PatchApplied: true, Outcome: verify.Outcome{Command: "pytest", ExitCode: 1, Duration: time.Second, Tail: tail,
			Tests: map[string]verify.Status{"tests/test_x.py::test_ok": verify.Pass, testID: verify.Fail}}},
		ScannerFailLevel: scanner.FailError,
		Scanners: []audit.ScannerRun{{Name: "sast", ExitCode: 1, Findings: scanner.Findings{Kept: []scanner.Finding{
			{Rule: "r1", Level: scanner.LevelWarning, Message: "hard-coded credential " + aws + " aws_secret_access_key=" + awsSecret, File: "a.py", Line: 4, EndLine: 4}}}}},
	}
	res.Comparison = func() *verify.Comparison {
		c := verify.Compare(res.TestsBefore.Outcome, res.TestsAfter.Outcome)
		return &c
	}()
	out, err := OutcomeOf(res, RunSpec{Issue: 3})
	if err != nil {
		t.Fatal(err)
	}
	annotations, _ := json.Marshal(out.Check.Annotations)
	ev, _ := json.Marshal(testsEvent(res))
	shown := map[string]string{
		"PR body": out.PRBody, "status summary": out.Summary, "report": out.Report,
		"check run text": out.Check.Text, "check run annotations": string(annotations), "run page tests event": string(ev),
	}
	for _, name := range []string{"PR body", "status summary", "report", "check run text", "check run annotations", "run page tests event"} {
		text := shown[name]
		var held []string
		for what, v := range map[string]string{"AWS key id": aws, "AWS secret key": awsSecret, "private key line": keyLines[2]} {
			if strings.Contains(text, v) {
				held = append(held, what)
			}
		}
		if len(held) > 0 {
			t.Errorf("the %s holds %v in clear", name, held)
		}
	}
}
