package verify

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateFixtures = flag.Bool("update", false, "rewrite testdata/unittest-*.txt from real runs in the sandbox")

// utTests exercises every way unittest reports a test: pass, fail, error, skip, expected
// failure, unexpected success, a docstring (two-line description), subtests, output on
// standard error with and without a newline before the status, a failing setUpClass, and
// (in utBroken) a module that does not import.
const utTests = `import sys
import unittest


class TestGroup(unittest.TestCase):
    def test_pass(self):
        self.assertEqual(1 + 1, 2)

    def test_fail(self):
        self.assertEqual(1 + 1, 3)

    def test_error(self):
        raise RuntimeError("boom")

    @unittest.skip("not today")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertTrue(False)

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_doc(self):
        """A docstring that verbose mode prints ... on the status line."""

    def test_doc_fail(self):
        """Fails, with a docstring."""
        self.fail("no")

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_subtests_ok(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertGreaterEqual(i, 0)

    def test_noise(self):
        sys.stderr.write("noise without a newline")
        print("noise on stdout")

    def test_noise_line(self):
        sys.stderr.write("noise ending in a newline, and ok\n")

    def test_noise_fail(self):
        sys.stderr.write("noise")
        self.fail("after noise")


class TestSetupFails(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("class setup failed")

    def test_never(self):
        pass
`

const utBroken = "import unittest\n\nclass TestX(unittest.TestCase):\n    def test_x(self:\n        pass\n"

// utWant is what the real run and its committed capture must give.
var utWant = map[string]Status{
	"tests.test_broken":                         Fail,
	"tests.test_mod.TestGroup.test_pass":        Pass,
	"tests.test_mod.TestGroup.test_fail":        Fail,
	"tests.test_mod.TestGroup.test_error":       Fail,
	"tests.test_mod.TestGroup.test_skip":        Skip,
	"tests.test_mod.TestGroup.test_xfail":       Skip,
	"tests.test_mod.TestGroup.test_xpass":       Fail,
	"tests.test_mod.TestGroup.test_doc":         Pass,
	"tests.test_mod.TestGroup.test_doc_fail":    Fail,
	"tests.test_mod.TestGroup.test_subtests":    Fail,
	"tests.test_mod.TestGroup.test_subtests_ok": Pass,
	"tests.test_mod.TestGroup.test_noise":       Pass,
	"tests.test_mod.TestGroup.test_noise_line":  Pass,
	"tests.test_mod.TestGroup.test_noise_fail":  Fail,
	"tests.test_mod.TestSetupFails":             Fail,
}

const utCmd = "python3 -m unittest"

// runUnittest runs `python3 -m unittest` through its Plan in a sandbox of the default image
// on a copy of dir; with -update it keeps the output as testdata/unittest-NAME.txt.
func runUnittest(t *testing.T, dir, fixture string) Outcome {
	t.Helper()
	plan := PlanFor(utCmd)
	if plan.Format != FormatUnittest {
		t.Fatalf("PlanFor(%q) = %+v", utCmd, plan)
	}
	run := runInSandbox(t, dir, plan)
	if *updateFixtures && fixture != "" {
		if err := os.WriteFile("testdata/unittest-"+fixture+".txt", run.Output, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Read(plan, run.ExitCode, run.Output, run.Report)
}

func TestReadUnittestReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tests/__init__.py":    "",
		"tests/test_mod.py":    utTests,
		"tests/test_broken.py": utBroken,
	})
	o := runUnittest(t, dir, "py311")
	if fmt.Sprint(o.Tests) != fmt.Sprint(utWant) {
		t.Errorf("Tests:\n got %v\nwant %v\ntail:\n%s", o.Tests, utWant, o.Tail)
	}
	if o.ExitCode != 1 || !strings.Contains(o.Tail, "FAILED (failures=4, errors=3, skipped=1, expected failures=1, unexpected successes=1)") {
		t.Errorf("exit %d, tail:\n%s", o.ExitCode, o.Tail)
	}
}

// TestCompareUnittestReal: a module that does not import before, fixed after; its key is
// Fixed and its tests are New, the other module's test is unchanged.
func TestCompareUnittestReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tests/__init__.py":    "",
		"tests/test_broken.py": utBroken,
		"tests/test_ok.py":     "import unittest\n\nclass TestOk(unittest.TestCase):\n    def test_ok(self):\n        pass\n",
	})
	before := runUnittest(t, dir, "")
	if before.ExitCode != 1 || fmt.Sprint(before.Tests) != "map[tests.test_broken:fail tests.test_ok.TestOk.test_ok:pass]" {
		t.Fatalf("import error run: exit %d, tests %v\n%s", before.ExitCode, before.Tests, before.Tail)
	}
	writeFiles(t, dir, map[string]string{"tests/test_broken.py": "import unittest\n\nclass TestX(unittest.TestCase):\n" +
		"    def test_x(self):\n        pass\n\n    def test_y(self):\n        self.fail()\n"})
	after := runUnittest(t, dir, "")
	got := Compare(before, after)
	want := Comparison{
		Fixed:        []string{"tests.test_broken"},
		New:          []string{"tests.test_broken.TestX.test_x", "tests.test_broken.TestX.test_y"},
		BeforeFailed: 1, AfterFailed: 1, AfterPassed: 2, PerTest: true,
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Compare:\n got %+v\nwant %+v\nbefore %v\nafter %v", got, want, before.Tests, after.Tests)
	}
}

// TestReadUnittest reads captured real output (testdata/unittest-*.txt, made by
// TestReadUnittestReal -update in the sandbox image's Python 3.11) and variants of it: the
// older description format, output cut short, and garbage.
func TestReadUnittest(t *testing.T) {
	t.Parallel()
	py311, err := os.ReadFile("testdata/unittest-py311.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Before Python 3.11 the parentheses hold the class, not the test id.
	var old strings.Builder
	for _, line := range strings.SplitAfter(string(py311), "\n") {
		line = strings.Replace(line, "(unittest.loader._FailedTest.tests.test_broken)", "(unittest.loader._FailedTest)", 1)
		for _, k := range []string{"tests.test_mod.TestGroup", "tests.test_mod.TestSetupFails"} {
			if i := strings.Index(line, " ("+k+"."); i >= 0 {
				name := strings.TrimLeft(line[:i], " ")
				if f, rest, ok := strings.Cut(name, ": "); ok && isUnittestFlavour(f) {
					name = rest
				}
				line = strings.Replace(line, " ("+k+"."+name+")", " ("+k+")", 1)
			}
		}
		old.WriteString(line)
	}
	cut := py311[:strings.Index(string(py311), "test_subtests_ok ")]
	tests := []struct {
		name   string
		output string
		want   map[string]Status
	}{
		{"Python311", string(py311), utWant},
		{"Python310", old.String(), utWant},
		{
			// The interpreter died in test_subtests_ok: it fails, and nothing after it exists.
			"Cut", string(cut) + "test_subtests_ok (tests.test_mod.TestGroup.test_subtests_ok) ... ",
			map[string]Status{
				"tests.test_broken":                         Fail,
				"tests.test_mod.TestGroup.test_doc":         Pass,
				"tests.test_mod.TestGroup.test_doc_fail":    Fail,
				"tests.test_mod.TestGroup.test_error":       Fail,
				"tests.test_mod.TestGroup.test_fail":        Fail,
				"tests.test_mod.TestGroup.test_noise":       Pass,
				"tests.test_mod.TestGroup.test_noise_fail":  Fail,
				"tests.test_mod.TestGroup.test_noise_line":  Pass,
				"tests.test_mod.TestGroup.test_pass":        Pass,
				"tests.test_mod.TestGroup.test_skip":        Skip,
				"tests.test_mod.TestGroup.test_subtests":    Fail,
				"tests.test_mod.TestGroup.test_subtests_ok": Fail,
			},
		},
		{"NoTests", "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", map[string]Status{}},
		{"SkippedEmptyReason", "test_a (m.T.test_a) ... skipped ''\ntest_b (m.T.test_b) ... skipped \"it's\"\n", map[string]Status{"m.T.test_a": Skip, "m.T.test_b": Skip}},
		{"StatusOnLaterLine", "test_a (m.T.test_a) ... log line\nmore log\nok\n", map[string]Status{"m.T.test_a": Pass}},
		{"ModuleSetupFails", "setUpModule (m) ... ERROR\n", map[string]Status{"m": Fail}},
		{"NotUnittest", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'\n", nil},
		{"Dots", "..F.s\n", nil},
		{"Empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Read(PlanFor(utCmd), 1, []byte(tc.output), nil)
			checkOutcome(t, o)
			if fmt.Sprint(o.Tests) != fmt.Sprint(tc.want) || (o.Tests == nil) != (tc.want == nil) {
				t.Errorf("Tests:\n got %v\nwant %v", o.Tests, tc.want)
			}
		})
	}
}

func FuzzReadUnittest(f *testing.F) {
	if b, err := os.ReadFile("testdata/unittest-py311.txt"); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte("test_a (m.T.test_a)\ndoc ... ok\n  test_b (m.T.test_b) (i=1) ... FAIL\n"))
	f.Add([]byte("ERROR: setUpClass (m.T)\n" + strings.Repeat("=", 70) + "\nRan 2 tests in 0.1s\n"))
	f.Add([]byte("test_x (unittest.loader._FailedTest.m) ... noiseskipped 'r'\r\n ( ) ... \n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		o := Read(PlanFor(utCmd), 1, out, nil)
		checkOutcome(t, o)
		for k := range o.Tests {
			if k == "" {
				t.Fatal("empty test key")
			}
		}
		if o.Tests != nil {
			c := Compare(o, o)
			if len(c.Fixed)+len(c.Broken)+len(c.New)+len(c.Removed) != 0 {
				t.Fatalf("a run compared with itself changed: %+v", c)
			}
		}
	})
}
