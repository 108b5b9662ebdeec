package runner_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// buildScanImage returns the sandbox image with the fake scanners of testdata/scanners added
// (dockertest.ScanImage), built once per test binary.
func buildScanImage(t *testing.T) string {
	t.Helper()
	return dockertest.ScanImage(t, docker, filepath.Join("..", "testdata"))
}

// scanned runs the scripted pyaverage fix (its patch changes line 16 of stats/basic.py) in
// the scan image with the given scanners.
func scanned(t *testing.T, scanners string, timeout time.Duration, level scanner.FailLevel) *runner.Result {
	t.Helper()
	scanImage := buildScanImage(t)
	list, err := scanner.Parse(scanners)
	if err != nil {
		t.Fatal(err)
	}
	b := setupWith(t, "pyaverage", leaftest.LoadModel(t, "e2e-pyaverage.json"), scanImage, func(c *runner.Config) {
		c.Scanners, c.ScannerTimeout, c.ScannerFailLevel = list, timeout, level
	})
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q, want agent", got)
	}
	if left := containersOf(t, b.spec.RunID); len(left) != 0 {
		t.Errorf("%d sandboxes left after the run", len(left))
	}
	return res
}

// checkTestsUnchanged: the scanners changed nothing of the run's patch and tests.
func checkTestsUnchanged(t *testing.T, res *runner.Result) {
	t.Helper()
	p := string(res.PatchBytes())
	if !strings.Contains(p, "+    return total(xs) / len(xs)") || strings.Count(p, "diff --git") != 1 {
		t.Errorf("the patch is not the model's fix alone:\n%s", p)
	}
	if res.TestsAfter == nil || res.TestsAfter.ExitCode != 0 || !res.TestsAfter.PatchApplied || res.Comparison == nil || len(res.Comparison.Fixed) != 2 {
		t.Errorf("the tests after are not the fix's: %+v, %+v", res.TestsAfter, res.Comparison)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "scanner") {
			t.Errorf("a note about the scanners: %s", n)
		}
	}
}

// TestScannersEndToEnd: the operator's scanner runs on the patched tree in its own sealed
// sandbox; its finding on the line the patch changed reaches the report, the PR body, the
// check run's summary and annotations and fails the check (level error), while its findings
// on unchanged lines (an error among them) are dropped. Scanners that crash, hang past their
// timeout, write garbage, a symbolic link to /etc/passwd, a 9 MiB file or a FIFO are each
// reported as such, and change nothing else.
func TestScannersEndToEnd(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := scanned(t, "sast=fake-sast ok {sarif};; crash=fake-sast crash;; hang=fake-sast hang;; garbage=fake-sast garbage\n"+
		"symlink=fake-sast symlink;; huge=fake-sast huge;; fifo=fake-sast fifo", 5*time.Second, "")
	t.Logf("the run took %s", time.Since(start).Round(time.Millisecond))
	checkTestsUnchanged(t, res)

	want := map[string]string{
		"crash":   "crashed: exited 3 and wrote no SARIF; no findings taken",
		"hang":    "timed out after 5s; no findings taken",
		"garbage": "wrote SARIF that could not be read (the SARIF file is not JSON (at byte 2)); no findings taken",
		"symlink": "its SARIF file is a symbolic link, which frognano does not follow; no findings taken",
		"huge":    "its SARIF file is larger than 8 MiB; no findings taken",
		"fifo":    "its SARIF file is not a regular file; no findings taken",
	}
	if len(res.Scanners) != 7 {
		t.Fatalf("%d scanners reported, want 7: %+v", len(res.Scanners), res.Scanners)
	}
	for i, s := range res.Scanners {
		t.Logf("scanner %s: %s in its sandbox (exit %d)", s.Name, s.Duration.Round(time.Millisecond), s.ExitCode)
		if i == 0 {
			continue
		}
		if s.Problem != want[s.Name] || len(s.Kept) != 0 {
			t.Errorf("scanner %s: problem %q, findings %v; want %q", s.Name, s.Problem, s.Kept, want[s.Name])
		}
	}
	if !strings.Contains(res.Scanners[1].Tail, "internal error: cannot parse") {
		t.Errorf("the crash's output is not kept: %q", res.Scanners[1].Tail)
	}
	sast := res.Scanners[0]
	wantFinding := scanner.Finding{Rule: "fake.division", Level: scanner.LevelError, Message: "division by a length: an empty list divides by zero",
		File: "stats/basic.py", Line: 16, EndLine: 16}
	if sast.Name != "sast" || sast.Problem != "" || sast.ExitCode != 1 || len(sast.Kept) != 1 || sast.Kept[0] != wantFinding {
		t.Fatalf("scanner sast = %+v, want exit 1 and only %+v", sast, wantFinding)
	}
	// fake.def on lines 4 and 12 (a file: URI), fake.import on the test file's lines 1 and 3,
	// fake.def of the test functions: all on lines the patch did not touch.
	if sast.Elsewhere < 4 || sast.Unplaced != 0 {
		t.Errorf("scanner sast: %d findings elsewhere, %d unplaced", sast.Elsewhere, sast.Unplaced)
	}

	md, body := report.Markdown(res), report.PRBody(res, report.Fit{})
	check := report.Check(res, nil)
	// Messages and problems are prose: markdown's punctuation escaped.
	line := "- **error** `fake.division` in `stats/basic.py` line 16 (`sast`): division by a length\\: an empty list divides by zero"
	for name, text := range map[string]string{"report": md, "PR body": body, "check summary": check.Summary} {
		for _, w := range []string{"## Scanners", line, `timed out after 5s\; no findings taken`, "| `sast` | 1 |",
			"a symbolic link\\, which frognano does not follow", "one at level `error` or above fails the check run"} {
			if !strings.Contains(text, w) {
				t.Errorf("the %s lacks %q", name, w)
			}
		}
		for _, bad := range []string{"fake.import", "fake.def", "root:x:0:0"} {
			if strings.Contains(text, bad) {
				t.Errorf("the %s holds %q", name, bad)
			}
		}
	}
	if !strings.Contains(md, "internal error: cannot parse") || strings.Contains(body, "internal error: cannot parse") {
		t.Error("a failed scanner's output belongs in the report, and only there")
	}
	if check.Conclusion != report.CheckFailure || !strings.HasPrefix(check.Title, "1 scanner finding(s) at level error or above on the lines the patch changes. All 4 test(s) pass") {
		t.Errorf("check = %s: %q", check.Conclusion, check.Title)
	}
	wantAnn := report.CheckAnnotation{Path: "stats/basic.py", StartLine: 16, EndLine: 16, Level: report.AnnotationFailure,
		Message: wantFinding.Message, Title: "sast: fake.division", RawDetails: "scanner: sast\nrule: fake.division\nSARIF level: error"}
	if len(check.Annotations) != 1 || check.Annotations[0] != wantAnn {
		t.Errorf("annotations = %+v, want %+v", check.Annotations, wantAnn)
	}
	stored, _ := json.Marshal(res)
	if strings.Contains(string(stored), "root:x:0:0") {
		t.Error("/etc/passwd was read out of a sandbox")
	}
}

// TestScannerFailLevel: with FROGNANO_SCANNER_FAIL_LEVEL=none the same finding is listed and
// annotated as a warning but the check keeps the tests' conclusion; a scanner that fails to
// run beside it changes nothing either.
func TestScannerFailLevel(t *testing.T) {
	t.Parallel()
	res := scanned(t, "sast=fake-sast ok;;crash=fake-sast crash", time.Minute, scanner.FailNone)
	checkTestsUnchanged(t, res)
	check := report.Check(res, nil)
	if check.Conclusion != report.CheckSuccess || strings.Contains(check.Title, "scanner") {
		t.Errorf("check = %s: %q, want the tests' success", check.Conclusion, check.Title)
	}
	if len(check.Annotations) != 1 || check.Annotations[0].Level != report.AnnotationWarning || check.Annotations[0].StartLine != 16 {
		t.Errorf("annotations = %+v, want one warning on line 16", check.Annotations)
	}
	if !strings.Contains(check.Summary, "`fake.division` in `stats/basic.py` line 16") || !strings.Contains(check.Summary, `crashed\: exited 3`) ||
		!strings.Contains(check.Summary, "none fails the check run") {
		t.Errorf("the summary lacks the scanners:\n%s", check.Summary)
	}
}
