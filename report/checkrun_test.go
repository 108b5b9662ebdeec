package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/verify"
)

func testRun(exit int, tests map[string]verify.Status, tail string) *runner.TestRun {
	return &runner.TestRun{Outcome: verify.Outcome{Command: "pytest", ExitCode: exit, Tests: tests, Tail: tail}, PatchApplied: true}
}

func TestCheckConclusion(t *testing.T) {
	t.Parallel()
	fail, pass := verify.Fail, verify.Pass
	tests := []struct {
		name          string
		r             *runner.Result
		want, inTitle string
	}{
		{"NoTestCommand", &runner.Result{}, CheckNeutral, "no test command"},
		{"NotRunAfter", &runner.Result{TestCommand: "pytest", TestsBefore: testRun(1, nil, "")}, CheckNeutral, "not run with the patch"},
		{"AfterRunError", &runner.Result{TestCommand: "pytest", TestsAfter: &runner.TestRun{Error: "sandbox: boom"}}, CheckNeutral, "could not be run"},
		{"FixedAllPass", &runner.Result{TestCommand: "pytest",
			TestsAfter: testRun(0, map[string]verify.Status{"a": pass}, ""),
			Comparison: &verify.Comparison{PerTest: true, Fixed: []string{"a"}, AfterPassed: 1}}, CheckSuccess, "1 fixed"},
		{"FixedSomeStillFailing", &runner.Result{TestCommand: "pytest",
			TestsAfter: testRun(1, map[string]verify.Status{"a": pass, "b": fail}, ""),
			Comparison: &verify.Comparison{PerTest: true, Fixed: []string{"a"}, StillFailing: []string{"b"}, AfterFailed: 1}}, CheckSuccess, "1 still failing"},
		{"Broken", &runner.Result{TestCommand: "pytest",
			TestsAfter: testRun(1, map[string]verify.Status{"a": pass, "b": fail}, ""),
			Comparison: &verify.Comparison{PerTest: true, Fixed: []string{"a"}, Broken: []string{"b"}, AfterFailed: 1}}, CheckFailure, "1 test(s) broken"},
		{"NothingShowsTheChange", &runner.Result{TestCommand: "pytest",
			TestsAfter: testRun(1, map[string]verify.Status{"b": fail}, ""),
			Comparison: &verify.Comparison{PerTest: true, StillFailing: []string{"b"}, AfterFailed: 1}}, CheckNeutral, "No test shows"},
		{"NewTestFails", &runner.Result{TestCommand: "pytest",
			TestsAfter: testRun(1, map[string]verify.Status{"n": fail}, ""),
			Comparison: &verify.Comparison{PerTest: true, New: []string{"n"}, AfterFailed: 1}}, CheckFailure, "fail with the patch"},
		{"ExitCodeOnlyPasses", &runner.Result{TestCommand: "make test", TestsBefore: testRun(2, nil, ""), TestsAfter: testRun(0, nil, ""),
			Comparison: &verify.Comparison{}}, CheckSuccess, "exit code"},
		{"ExitCodeOnlyBroke", &runner.Result{TestCommand: "make test", TestsBefore: testRun(0, nil, ""), TestsAfter: testRun(2, nil, ""),
			Comparison: &verify.Comparison{}}, CheckFailure, "passed before"},
		{"ExitCodeOnlyFailsBoth", &runner.Result{TestCommand: "make test", TestsBefore: testRun(2, nil, ""), TestsAfter: testRun(2, nil, ""),
			Comparison: &verify.Comparison{}}, CheckNeutral, "before and after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Check(tt.r, nil)
			if c.Conclusion != tt.want || !strings.Contains(c.Title, tt.inTitle) {
				t.Errorf("got %q %q, want %q with %q", c.Conclusion, c.Title, tt.want, tt.inTitle)
			}
			if tt.want == CheckNeutral && !strings.Contains(c.Summary, "Why neutral") {
				t.Errorf("a neutral check does not say why:\n%s", c.Summary)
			}
		})
	}
}

// TestCheckGolden pins the check run of a run whose patch broke a test, with hostile test
// names and output: the summary holds the table, the text the failing tests and the output's
// end, both inert and redacted.
func TestCheckGolden(t *testing.T) {
	t.Parallel()
	r := hostileResult(t)
	r.TestsAfter = testRun(1, map[string]verify.Status{"tests/test_a.py::test_x": verify.Pass, "tests/test_b.py::test_<img src=x>": verify.Fail},
		"FAILED tests/test_b.py::test_<img src=x> - token s3cr3t!! </details> @octocat\n1 failed, 1 passed")
	r.Comparison = &verify.Comparison{PerTest: true, Fixed: []string{"tests/test_a.py::test_x"}, Broken: []string{"tests/test_b.py::test_<img src=x>"}, AfterFailed: 1, AfterPassed: 1}
	c := Check(r, growingRedact)
	if c.Conclusion != CheckFailure {
		t.Fatalf("conclusion %q", c.Conclusion)
	}
	for _, s := range []string{c.Summary, c.Text} {
		if strings.Contains(s, "s3cr3t!!") {
			t.Error("a secret is left in the check run")
		}
	}
	checkInert(t, c.Summary, 0)
	checkInert(t, c.Text, 0)
	golden.Check(t, "check-run-summary.md", c.Summary)
	golden.Check(t, "check-run-text.md", c.Text)
}

// TestCheckWithinLimits: a huge test output and thousands of failing tests still fit the
// Checks API's 65535 characters, redacted or not.
func TestCheckWithinLimits(t *testing.T) {
	t.Parallel()
	tests := map[string]verify.Status{}
	var broken []string
	for i := range 5000 {
		name := "tests/test_" + strings.Repeat("é", 40) + "::t" + strings.Repeat("x", i%7) + "_" + strconv.Itoa(i)
		tests[name] = verify.Fail
		broken = append(broken, name)
	}
	r := &runner.Result{TestCommand: "pytest", TestsBefore: testRun(0, nil, strings.Repeat("s3cr3t!! 🐸\n", 20000)),
		TestsAfter: testRun(1, tests, strings.Repeat("s3cr3t!! 🐸\n", 20000)),
		Comparison: &verify.Comparison{PerTest: true, Broken: broken, AfterFailed: len(broken)}}
	c := Check(r, growingRedact)
	for name, s := range map[string]string{"summary": c.Summary, "text": c.Text} {
		if n := runeLen(s); n > checkOutputLimit || n == 0 {
			t.Errorf("%s has %d characters", name, n)
		}
		if strings.Contains(s, "s3cr3t!!") {
			t.Errorf("%s holds a secret", name)
		}
	}
}
