package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pyTests = `import pytest


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    assert 1 + 1 == 3


@pytest.mark.skip(reason="not today")
def test_skip():
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1


@pytest.fixture
def broken():
    raise RuntimeError("fixture setup failed")


def test_setup_error(broken):
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


class TestGroup:
    def test_method(self):
        assert True
`

// pytestWant is what both the real run and the committed fixture must give.
var pytestWant = map[string]Status{
	"tests.test_mod.test_pass":             Pass,
	"tests.test_mod.test_fail":             Fail,
	"tests.test_mod.test_skip":             Skip,
	"tests.test_mod.test_param[1]":         Pass,
	"tests.test_mod.test_param[2]":         Fail,
	"tests.test_mod.test_setup_error":      Fail,
	"tests.test_mod.test_xfail":            Skip,
	"tests.test_mod.TestGroup.test_method": Pass,
}

// runPytest runs the Plan for CmdPytest with the real pytest on a copy of dir in a sandbox
// of the default image, and reads the outcome back.
func runPytest(t *testing.T, dir string) Outcome {
	t.Helper()
	plan := PlanFor(CmdPytest)
	run := runInSandbox(t, dir, plan)
	if run.Report == nil {
		t.Fatalf("pytest wrote no report (exit %d):\n%s", run.ExitCode, run.Output)
	}
	return Read(plan, run.ExitCode, run.Output, run.Report)
}

func TestReadPytestReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"tests/test_mod.py": pyTests})
	if got := Detect(dir); got != CmdPytest {
		t.Fatalf("Detect = %q", got)
	}
	o := runPytest(t, dir)
	if fmt.Sprint(o.Tests) != fmt.Sprint(pytestWant) {
		t.Errorf("Tests:\n got %v\nwant %v", o.Tests, pytestWant)
	}
	if o.ExitCode != 1 || !strings.Contains(o.Tail, "2 failed, 3 passed, 1 skipped, 1 xfailed, 1 error") {
		t.Errorf("exit %d, tail:\n%s", o.ExitCode, o.Tail)
	}
}

func TestReadPytestFixture(t *testing.T) {
	t.Parallel()
	xml, err := os.ReadFile("testdata/pytest-junit.xml")
	if err != nil {
		t.Fatal(err)
	}
	o := Read(PlanFor("pytest"), 1, []byte("1 failed\n"), xml)
	if fmt.Sprint(o.Tests) != fmt.Sprint(pytestWant) {
		t.Errorf("Tests:\n got %v\nwant %v", o.Tests, pytestWant)
	}
}

// TestComparePytestReal: a collection error before (the module does not import),
// fixed after; the module's key is Fixed and its tests are not New.
func TestComparePytestReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pytest.ini":           "[pytest]\n",
		"tests/test_broken.py": "def test_x(:\n    pass\n",
		"tests/test_ok.py":     "def test_ok():\n    pass\n",
	})
	before := runPytest(t, dir)
	if before.ExitCode != 2 || before.Tests["tests.test_broken"] != Fail {
		t.Fatalf("collection error run: exit %d, tests %v", before.ExitCode, before.Tests)
	}
	writeFiles(t, dir, map[string]string{"tests/test_broken.py": "def test_x():\n    pass\n\ndef test_y():\n    assert False\n"})
	after := runPytest(t, dir)
	got := Compare(before, after)
	want := Comparison{
		Fixed:        []string{"tests.test_broken"},
		New:          []string{"tests.test_broken.test_x", "tests.test_broken.test_y", "tests.test_ok.test_ok"},
		BeforeFailed: 1, AfterFailed: 1, AfterPassed: 2, PerTest: true,
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Compare:\n got %+v\nwant %+v\nbefore %v\nafter %v", got, want, before.Tests, after.Tests)
	}
}

// TestPytestPlanRemovesStaleReport: a run that dies before pytest writes its report
// must not be judged by the report of the run before it.
func TestPytestPlanRemovesStaleReport(t *testing.T) {
	t.Parallel()
	plan := PlanFor("pytest -q")
	report := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(report, []byte("<testsuite><testcase name='old'/></testsuite>"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same plan with pytest replaced by a command that dies at once.
	shell := strings.Replace(strings.ReplaceAll(plan.Shell, plan.ReportFile, report), "pytest -q", "exit 3; true", 1)
	_, code := runShell(t, t.TempDir(), shell)
	if _, err := os.Stat(report); !os.IsNotExist(err) || code != 3 {
		t.Fatalf("exit %d, stale report still there: %v", code, err)
	}
}
