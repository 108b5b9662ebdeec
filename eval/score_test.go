package eval

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/verify"
)

// TestScoreTests looks ids up in keys as frognano's readers make them: pytest's JUnit
// (module.Class.test[param]), go test -json (importpath.TestName/sub), unittest (module.Class.method).
func TestScoreTests(t *testing.T) {
	t.Parallel()
	tests := map[string]verify.Status{
		"tests.test_basic.test_total":          verify.Pass,
		"tests.test_basic.TestMean.test_empty": verify.Fail,
		"tests.test_basic.test_param[1]":       verify.Pass,
		"tests.test_basic.test_param[2]":       verify.Fail,
		"tests.test_skip.test_s":               verify.Skip,
		"tests.test_broken":                    verify.Fail, // did not import
		"example.com/m/pkg.TestA":              verify.Pass,
		"example.com/m/pkg.TestB":              verify.Pass,
		"example.com/m/pkg.TestB/sub_one":      verify.Pass,
		"example.com/m/other":                  verify.Fail, // did not build
		"tests.test_mod.Group.test_pass":       verify.Pass,
		"tests.test_mod.Group.test_fails":      verify.Fail,
		"tests.test_weird.test_x[a::b/c.py]":   verify.Pass,
	}
	cases := map[string]string{
		"tests/test_basic.py::test_total":           OutcomePass,
		"tests.test_basic.test_total":               OutcomePass,
		"./tests/test_basic.py::test_total":         OutcomePass,
		"tests/test_basic.py::TestMean::test_empty": OutcomeFail,
		"tests/test_basic.py::test_param[1]":        OutcomePass,
		"tests/test_basic.py::test_param":           OutcomeFail, // the worst of its parameters
		"tests/test_skip.py::test_s":                OutcomeSkip,
		"tests/test_broken.py::test_anything":       OutcomeFail, // its module failed as a whole
		"example.com/m/pkg/TestA":                   OutcomePass,
		"example.com/m/pkg.TestA":                   OutcomePass,
		"example.com/m/pkg/TestB/sub_one":           OutcomePass,
		"example.com/m/other/TestC":                 OutcomeFail, // its package did not build
		"tests.test_mod.Group.test_pass":            OutcomePass,
		"tests.test_mod.Group.test_fails":           OutcomeFail,
		"tests.test_mod.Group":                      OutcomeFail,
		"tests/test_weird.py::test_x[a::b/c.py]":    OutcomePass,
		"tests/test_basic.py::test_median":          OutcomeMissing,
		"example.com/m/pkg/TestZ":                   OutcomeMissing,
		"tests.test_basic.test_tot":                 OutcomeMissing, // a prefix is not a family
		"":                                          OutcomeMissing,
	}
	var ids []string
	for id := range cases {
		ids = append(ids, id)
	}
	s := ScoreTests(tests, ids, nil)
	for id, want := range cases {
		if got := s.FailToPass[id]; got != want {
			t.Errorf("%q: %q, want %q", id, got, want)
		}
	}
	if len(s.Missing) != 4 || s.Resolved() {
		t.Errorf("missing %v, resolved %v", s.Missing, s.Resolved())
	}
	ok := ScoreTests(tests, []string{"tests/test_basic.py::test_total"}, []string{"example.com/m/pkg/TestA"})
	if !ok.Resolved() || len(ok.Missing) != 0 {
		t.Errorf("all passing is not resolved: %+v", ok)
	}
	if ScoreTests(tests, []string{"tests/test_basic.py::test_total"}, []string{"tests/test_skip.py::test_s"}).Resolved() {
		t.Error("a skipped PASS_TO_PASS test counts as passing")
	}
}

// TestCombine: the model's patch and the test patch are summed on the host; where both touch
// a file the test patch wins; a test patch that does not apply is errTestPatch.
func TestCombine(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{"code.py": "a = 1\n", "tests/test_code.py": "def test_a():\n    pass\n"})
	diff := func(files map[string]string) []byte {
		gittest.Write(t, dir, files)
		out, err := exec.Command("git", "-C", dir, "diff").Output()
		if err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "checkout", "--", ".")
		return out
	}
	model := diff(map[string]string{"code.py": "a = 2\n", "tests/test_code.py": "def test_a():\n    assert False  # the model's\n"})
	tests := diff(map[string]string{"tests/test_code.py": "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"})
	sum, err := combine(context.Background(), dir, base, model, tests)
	if err != nil {
		t.Fatal(err)
	}
	s := string(sum)
	if !strings.Contains(s, "+a = 2") || !strings.Contains(s, "+def test_b():") || strings.Contains(s, "the model's") {
		t.Errorf("combined patch:\n%s", s)
	}
	// The combined patch applies to the base as the sandbox applies it.
	gittest.Write(t, dir, nil)
	cmd := exec.Command("git", "-C", dir, "apply", "--check", "-")
	cmd.Stdin = strings.NewReader(s)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the combined patch does not apply: %v\n%s", err, out)
	}
	bad := []byte(strings.ReplaceAll(string(tests), "def test_a", "def test_q"))
	if _, err := combine(context.Background(), dir, base, model, bad); err == nil || !strings.Contains(err.Error(), errTestPatch.Error()) {
		t.Errorf("a test patch that does not apply: %v", err)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" || filepath.Base(dir) == "" {
		t.Errorf("the repository was changed: %s", st)
	}
}
