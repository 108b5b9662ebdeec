package patch

import (
	"fmt"
	"strings"
	"testing"
)

// modDiff is a modified file's diff with one hunk starting at old line start; lines carry
// their ' ', '-' or '+'.
func modDiff(path string, start int, lines ...string) string {
	oldN, newN := 0, 0
	for _, l := range lines {
		switch l[0] {
		case ' ':
			oldN++
			newN++
		case '-':
			oldN++
		case '+':
			newN++
		}
	}
	return fmt.Sprintf("diff --git a/%s b/%s\nindex 1234567..89abcde 100644\n--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n%s\n",
		path, path, path, path, start, oldN, start, newN, strings.Join(lines, "\n"))
}

// addDiff is a new file's diff.
func addDiff(path string, lines ...string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..89abcde\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n+%s\n",
		path, path, path, len(lines), strings.Join(lines, "\n+"))
}

func TestAffectsTests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		diff string
		want string // part of the reason; "" when the file must not be flagged
	}{
		// The case of the issue: a conftest.py that turns failures into passes.
		{"ConftestAdded", addDiff("conftest.py", "def pytest_runtest_makereport(item, call):", "    pass"), "pytest loads it"},
		{"ConftestDeep", modDiff("tests/unit/conftest.py", 3, " x = 1", "+y = 2"), "pytest loads it"},
		{"PytestIni", addDiff("pytest.ini", "[pytest]", "addopts = -p no:warnings"), "pytest's configuration"},
		{"Sitecustomize", addDiff("sitecustomize.py", "import builtins"), "start of every interpreter"},
		{"Usercustomize", addDiff("lib/usercustomize.py", "import os"), "start of every interpreter"},
		{"Pth", addDiff("src/zz_hook.pth", "import hook"), "import lines"},
		{"Noxfile", modDiff("noxfile.py", 1, " import nox", "+# x"), "nox sessions"},
		{"Coveragerc", addDiff(".coveragerc", "[report]", "fail_under = 0"), "coverage"},
		{"JestConfig", addDiff("jest.config.js", "module.exports = {}"), "test runner configuration"},
		{"VitestConfig", addDiff("web/vitest.config.ts", "export default {}"), "test runner configuration"},
		{"Mocharc", addDiff(".mocharc.yml", "spec: x"), "test runner configuration"},
		{"Karma", addDiff("karma.conf.js", "module.exports = {}"), "test runner configuration"},
		{"Workflow", addDiff(".github/workflows/ci.yml", "on: push"), "CI configuration"},
		{"GitLab", modDiff(".gitlab-ci.yml", 1, " a: b", "+c: d"), "CI configuration"},
		{"CargoConfig", addDiff(".cargo/config.toml", "[target.x86_64-unknown-linux-gnu]", "runner = \"true\""), "Cargo"},
		{"FrognanoTestCommand", addDiff(".frognano/test-command", "true"), "test command frognano runs"},

		// Files with test sections: only changes in those sections count.
		{"PyprojectPytestSection", modDiff("pyproject.toml", 20, " [tool.pytest.ini_options]", " minversion = \"7\"", "-addopts = \"-q\"", "+addopts = \"-q --deselect tests/test_a.py::test_x\""), `"tool.pytest.ini_options" section`},
		{"PyprojectMentionsPytestOutsideSections", modDiff("pyproject.toml", 1, " [project]", " dependencies = [", "+  \"pytest-randomly\","), "mentions"},
		{"PyprojectPytestSectionNoWord", modDiff("pyproject.toml", 20, " [tool.pytest.ini_options]", " minversion = \"7\"", "+xfail_strict = false"), `"tool.pytest.ini_options" section`},
		{"PyprojectNewPytestSection", modDiff("pyproject.toml", 30, " [tool.black]", " line-length = 100", "+", "+[tool.pytest.ini_options]", "+xfail_strict = false"), `"tool.pytest.ini_options" section`},
		{"PyprojectEntryPoint", modDiff("pyproject.toml", 10, " [project.entry-points.pytest11]", "+myplugin = \"pkg.plug\""), "section"},
		{"PyprojectCoverage", modDiff("pyproject.toml", 40, " [tool.coverage.report]", "+fail_under = 0"), `"tool.coverage.report" section`},
		{"PyprojectDependencyOnly", modDiff("pyproject.toml", 5, " [project]", " name = \"x\"", "-version = \"1.0\"", "+version = \"1.1\""), ""},
		{"PyprojectTopOfFile", modDiff("pyproject.toml", 1, "-# old comment", "+# new comment", " [build-system]"), ""},
		{"PyprojectSectionNotInView", modDiff("pyproject.toml", 57, " a = 1", "-b = 2", "+b = 3"), "does not show"},
		{"SetupCfgToolPytest", modDiff("setup.cfg", 12, " [tool:pytest]", "+python_files = nothing_*.py"), `"tool:pytest" section`},
		{"SetupCfgFlake8", modDiff("setup.cfg", 3, " [flake8]", "-max-line-length = 80", "+max-line-length = 100"), ""},
		{"ToxIniTestenv", modDiff("tox.ini", 1, " [tox]", " envlist = py3", " ", " [testenv]", "-commands = python -m x", "+commands = python -m y"), "section"},
		{"ToxIniPytest", modDiff("tox.ini", 9, " [pytest]", "+filterwarnings = ignore"), `"pytest" section`},

		// Makefiles: test and check targets.
		{"MakefileTestTarget", modDiff("Makefile", 8, " test:", "-\tgo test ./...", "+\ttrue"), `"test" target`},
		{"MakefileBuildTarget", modDiff("Makefile", 1, " build:", "-\tgo build -o a", "+\tgo build -o b"), ""},
		{"MakefileTargetNotInView", modDiff("GNUmakefile", 40, " \tcd x", "-\tfoo", "+\tbar"), "does not show"},
		{"MakefileVariableOutsideTargets", modDiff("Makefile", 1, "-PY ?= python3", "+PY ?= true", " "), `"PY ?= true"`},
		{"MakefileTargetVariable", modDiff("Makefile", 3, "+test: PY = true"), `"test: PY = true"`},
		{"MakefileInclude", modDiff("Makefile", 1, "+include evil.mk"), `"include evil.mk"`},
		// Python modules that take the place of the runner or the standard library.
		{"ShadowPytest", addDiff("pytest.py", "import sys", "sys.exit(0)"), `module "pytest"`},
		{"ShadowPytestPackage", addDiff("pytest/__init__.py", "x = 1"), `module "pytest"`},
		{"ShadowPrivatePytest", addDiff("_pytest/main.py", "x = 1"), `module "_pytest"`},
		{"ShadowPluggy", addDiff("pluggy/__init__.py", "x = 1"), `module "pluggy"`},
		{"ShadowUnittest", addDiff("unittest.py", "x = 1"), `module "unittest"`},
		{"ShadowStdlib", addDiff("json/__init__.py", "x = 1"), `module "json"`},
		{"NestedModuleIsNotShadowing", addDiff("src/unittest.py", "x = 1"), ""},
		{"OrdinaryTopLevelModule", addDiff("average.py", "x = 1"), ""},
		{"PackageData", addDiff("json/schema.json", "{}"), ""},
		{"Npmrc", addDiff(".npmrc", "script-shell=/bin/true"), "npm's settings"},
		{"YarnRC", addDiff(".yarnrc.yml", "x: 1"), "yarn's settings"},
		{"GoWork", addDiff("go.work", "go 1.26"), "Go workspace"},

		// package.json: the test script and runners' settings.
		{"PackageJSONTestScript", modDiff("package.json", 4, "   \"scripts\": {", "-    \"test\": \"jest\"", "+    \"test\": \"exit 0\""), "test runner settings"},
		{"PackageJSONVersion", modDiff("package.json", 1, " {", "   \"name\": \"x\",", "-  \"version\": \"1.0.0\",", "+  \"version\": \"1.0.1\","), ""},

		// Go: TestMain anywhere, test files, ordinary code.
		{"GoTestMain", modDiff("pkg/x/main_test.go", 1, " package x", "+func TestMain(m *testing.M) { os.Exit(0) }"), "defines TestMain"},
		{"GoTestFile", modDiff("pkg/x/x_test.go", 5, " func TestA(t *testing.T) {", "-\tt.Fatal(1)", "+\tt.Log(1)"), "changes an existing test file"},
		{"GoCode", modDiff("pkg/x/x.go", 5, " func A() int {", "-\treturn 1", "+\treturn 2"), ""},

		// Test files by their names; ordinary code is not flagged.
		{"PythonTestAdded", addDiff("tests/test_new.py", "def test_a(): pass"), "new test file"},
		{"PythonCode", modDiff("src/pkg/mod.py", 3, " def f():", "-    return 1", "+    return 2"), ""},
		{"PythonTestDeleted", "diff --git a/tests/test_a.py b/tests/test_a.py\ndeleted file mode 100644\nindex 89abcde..0000000\n--- a/tests/test_a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-def test_a(): assert False\n", "deletes a test file"},
		{"ConftestRenamedAway", "diff --git a/conftest.py b/conftest_off.py\nsimilarity index 100%\nrename from conftest.py\nrename to conftest_off.py\n", "renamed from"},
		{"PyprojectModeOnly", "diff --git a/pyproject.toml b/pyproject.toml\nold mode 100644\nnew mode 100755\n", ""},
		{"PyprojectBinary", "diff --git a/pyproject.toml b/pyproject.toml\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 4\nLcmZ?wcXD<G00aO6\n\nliteral 0\nHcmV?d00001\n\n", "does not show"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(tt.diff))
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, tt.diff)
			}
			if len(p.Files) != 1 {
				t.Fatalf("%d files", len(p.Files))
			}
			why, ok := p.Files[0].AffectsTests()
			if ok != (tt.want != "") || !strings.Contains(why, tt.want) {
				t.Errorf("AffectsTests() = %q, %v; want %v with %q", why, ok, tt.want != "", tt.want)
			}
		})
	}
}

// Without a diff, the files whose test settings are only a part of them are flagged: the
// path alone cannot clear them.
func TestAffectsTestsWithoutDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"pyproject.toml", true}, {"setup.cfg", true}, {"tox.ini", true}, {"Makefile", true}, {"build/rules.mk", true},
		{"package.json", true}, {"vite.config.ts", true}, {"conftest.py", true}, {"README.md", false}, {"main.go", false},
	}
	for _, tt := range tests {
		if _, ok := AffectsTests(tt.path, nil); ok != tt.want {
			t.Errorf("AffectsTests(%q, nil) = %v, want %v", tt.path, ok, tt.want)
		}
	}
}

func TestTestInfluencesKeepsPatchOrder(t *testing.T) {
	t.Parallel()
	diff := modDiff("src/a.py", 1, " x", "+y") + addDiff("conftest.py", "import pytest") +
		addDiff("tests/test_b.py", "import os", "def test_b(): pass") + addDiff("tests/test_c.py", "def test_c(): pass")
	p, err := Parse([]byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	got := TestInfluences(p.Files)
	if len(got) != 2 || got[0].Path != "conftest.py" || got[1].Path != "tests/test_b.py" {
		t.Errorf("TestInfluences = %+v, want conftest.py then tests/test_b.py", got)
	}
	if _, tests := Trust(p.Files, ""); len(tests) != 1 || tests[0] != (NewTest{Path: "tests/test_c.py", Tests: 1}) {
		t.Errorf("Trust's new tests = %+v, want tests/test_c.py with 1 test", tests)
	}
}

func FuzzAffectsTests(f *testing.F) {
	f.Add("pyproject.toml", modDiff("pyproject.toml", 3, " [tool.pytest.ini_options]", "+x = 1"))
	f.Add("Makefile", modDiff("Makefile", 1, " test:", "+\ttrue"))
	f.Add("a.go", "@@ -\n+\n-\n @@ -1")
	f.Add("pyproject.toml", modDiff("pyproject.toml", 3, " [tool.x]", `+[tool."py\u0074est\U0000007\x7\".x]`))
	f.Add("ci/go.sh", "bash -c './ci/go.sh' && python -m")
	f.Fuzz(func(t *testing.T, p, diff string) {
		AffectsTests(p, []byte(diff)) // must not panic
		commandRuns(p, diff)          // a command is the repository's text too
		tomlUnescape(diff)
	})
}
