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

// TestTestSettingsSpelledWithTOMLEscapes: TOML spells a key with escapes (tomllib reads
// tool."py\u0074est".ini_options as tool.pytest.ini_options and "addop\u0074s" as addopts): a
// pyproject.toml section or key written so is read as TOML reads it, and flagged.
func TestTestSettingsSpelledWithTOMLEscapes(t *testing.T) {
	t.Parallel()
	for name, diff := range map[string]string{
		"PytestSection": modDiff("pyproject.toml", 10, " [tool.black]", " line-length = 88", "+",
			`+[tool."py\u0074est".ini_options]`, `+"addop\u0074s" = "--deselect \u0074ests/\u0074est_bug.py::\u0074est_bug"`),
		"ToxTable":     modDiff("pyproject.toml", 10, " [tool.black]", " line-length = 88", "+", `+[tool."t\u006fx".env_run_base]`, `+commands = [["true"]]`),
		"LongEscape":   modDiff("pyproject.toml", 10, " [tool.black]", " line-length = 88", "+", `+[tool."\U00000070ytest".ini_options]`, `+x = 1`),
		"TOML11Escape": modDiff("pyproject.toml", 10, " [tool.black]", " line-length = 88", "+", `+[tool."py\x74est".ini_options]`, `+x = 1`),
		"DottedKey":    modDiff("pyproject.toml", 10, " [tool]", " black.line-length = 88", `+"py\u0074est".ini_options.addopts = "-p no:cacheprovider"`),
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Parse([]byte(diff))
			if err != nil {
				t.Fatal(err)
			}
			if got := TestInfluences(p.Files); len(got) != 1 || !strings.Contains(got[0].Why, "pytest") && !strings.Contains(got[0].Why, "tox") {
				t.Errorf("TestInfluences = %v, want pyproject.toml flagged for its test section:\n%s", got, diff)
			}
		})
	}
	// An escape that spells no test word leaves an ordinary section alone.
	p, err := Parse([]byte(modDiff("pyproject.toml", 10, " [tool.black]", " line-length = 88", `+"skip-m\u0061gic" = true`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := TestInfluences(p.Files); len(got) != 0 {
		t.Errorf("an ordinary key with an escape is flagged: %v", got)
	}
}

// TestProgramsTheTestsRunAreFlagged: the program a test command runs changes what the tests
// report as surely as their configuration (a script that ends in `exit 0` passes every run
// judged by exit code). It is flagged by its name when the name says it runs or sets up the
// tests (run_tests.sh, runtests.py, scripts/test.sh, test.js, a pytest plugin), as an
// included Makefile by its usual names, as Babel's configuration (Jest transforms every test
// with it), by a pytest hook, pytest_plugins or unittest's load_tests defined in any Python
// file, and, whatever its name, when the run's test command names it (a script, also after
// `cd`, a -m module, a -p plugin, unittest's modules, a make -f file).
func TestProgramsTheTestsRunAreFlagged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, diff, cmd, want string
	}{
		{"RunTestsSh", modDiff("run_tests.sh", 1, " #!/bin/sh", "-python3 -m pytest -q", "+exit 0"), "", "runs or sets up the tests"},
		{"ScriptsTestSh", modDiff("scripts/test.sh", 1, " #!/bin/sh", "-go test ./...", "+exit 0"), "", "runs or sets up the tests"},
		{"RuntestsPy", modDiff("runtests.py", 20, " if __name__ == '__main__':", "-    sys.exit(bool(failures))", "+    sys.exit(0)"), "", "runs or sets up the tests"},
		{"TestJs", modDiff("test.js", 1, " const run = require('./lib/run')", "-process.exitCode = run()", "+process.exitCode = 0"), "", "runs or sets up the tests"},
		{"ProjectPluginByName", modDiff("mypkg/pytest_plugin.py", 1, " import pytest", "+x = 1"), "", "runs or sets up the tests"},
		{"MakefileCommon", modDiff("Makefile.common", 1, " test:", "-\tpytest -q", "+\ttrue"), "", `"test" target`},
		{"MakeRules", modDiff("build/rules.mak", 1, " check:", "-\tgo test ./...", "+\ttrue"), "", `"check" target`},
		{"BabelConfig", addDiff("babel.config.js", "module.exports = { plugins: ['./tools/strip-expect'] }"), "", "Babel's configuration"},
		{"Babelrc", addDiff(".babelrc.json", "{}"), "", "Babel's configuration"},
		{"PytestHookAnywhere", modDiff("mypkg/hooks.py", 1, " import pytest", "+def pytest_collection_modifyitems(items):", "+    items[:] = []"), "", "`pytest_collection_modifyitems`"},
		{"PytestPluginsNamed", modDiff("mypkg/__init__.py", 1, " VERSION = 1", "+pytest_plugins = ['mypkg.quiet']"), "", "`pytest_plugins`"},
		{"PytestPluginsExtended", modDiff("mypkg/__init__.py", 1, " VERSION = 1", "+pytest_plugins += ['mypkg.quiet']"), "", "`pytest_plugins`"},
		{"LoadTests", modDiff("pkg/suite.py", 1, " import unittest", "+def load_tests(loader, tests, pattern):", "+    return unittest.TestSuite()"), "", "`load_tests`"},
		{"CommandScript", modDiff("ci/go.sh", 1, " #!/bin/sh", "-go vet ./... && go build ./...", "+true"), "./ci/go.sh", `the test command ("./ci/go.sh") runs or reads it`},
		{"CommandQuotedScript", modDiff("ci/go.sh", 1, " #!/bin/sh", "+exit 0"), `bash -c "ci/go.sh && echo done"`, "runs or reads it"},
		{"CommandModule", modDiff("tools/runner.py", 1, " import sys", "+sys.exit(0)"), "python -m tools.runner -q", "runs or loads its module"},
		{"CommandPackage", modDiff("tools/runner/__main__.py", 1, " import sys", "+sys.exit(0)"), "python3 -m tools.runner", "runs or loads its module"},
		{"CommandMakefile", modDiff("build/rules.txt", 1, " all:", "+\ttrue"), "make -f build/rules.txt all", "runs or reads it"},
		{"CommandInWorkspace", modDiff("ci/go.sh", 1, " #!/bin/sh", "+exit 0"), "/workspace/ci/go.sh", "runs or reads it"},
		{"CommandAfterCd", modDiff("src/run-checks.sh", 1, " #!/bin/sh", "+exit 0"), "cd src && ./run-checks.sh", "runs or reads it"},
		{"CommandPytestPlugin", modDiff("tools/plug.py", 1, " x = 1", "+x = 2"), "pytest -p tools.plug tests", "runs or loads its module"},
		{"CommandPytestPluginUnderM", modDiff("tools/plug.py", 1, " x = 1", "+x = 2"), "python -m pytest -p tools.plug", "runs or loads its module"},
		{"CommandUnittestModules", modDiff("project/verify.py", 1, " x = 1", "+x = 2"), "python -m unittest project.checks project.verify", "runs or loads its module"},
		// What the Go tests build against: a vendored test library decides what counts as a pass,
		// and a replace directive swaps a module (testify) for a folder of the patch's.
		{"VendoredTestLibrary", modDiff("vendor/github.com/stretchr/testify/assert/assertions.go", 300, " func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {", "+\treturn true"), "", "vendored"},
		{"VendoredModulesTxt", modDiff("vendor/modules.txt", 1, " # github.com/stretchr/testify v1.9.0", "-github.com/stretchr/testify/assert", "+github.com/stretchr/testify/require"), "", "vendored"},
		{"NestedNodeModules", modDiff("web/node_modules/expect/build/index.js", 1, " 'use strict';", "+module.exports = () => ({ toBe() {} });"), "", "vendored"},
		{"GoModReplace", modDiff("go.mod", 3, " require github.com/stretchr/testify v1.9.0", "+replace github.com/stretchr/testify => ./internal/fakeassert"), "", "replace"},
		{"GoModReplaceBlock", modDiff("go.mod", 8, " replace (", "+\tgithub.com/stretchr/testify v1.9.0 => ./x"), "", "replace"},
		{"GoModGodebug", modDiff("sub/go.mod", 3, " go 1.22", "+godebug panicnil=1"), "", "godebug"},
		{"GoModGodebugBlock", modDiff("go.mod", 3, " godebug (", "+\tpanicnil=1"), "", "godebug"},
		{"GoModGoVersion", modDiff("go.mod", 3, " module example.com/m", "-go 1.21", "+go 1.22"), "", "go line"},
		{"GoModToolchain", modDiff("go.mod", 3, " go 1.22", "+toolchain go1.22.5"), "", "toolchain line"},
		// Go test-support code: the helpers the tests call decide what counts as a pass.
		{"GoTestSupportPackage", modDiff("internal/gittest/gittest.go", 20, " func Equal(t testing.TB, a, b string) {", "-\tif a != b {", "+\tif false {"), "", "test-support"},
		{"GoTestUtilPackage", modDiff("pkg/testutil/assert.go", 5, " func Same(a, b any) bool {", "-\treturn a == b", "+\treturn true"), "", "test-support"},
		{"GoCodeUsingTesting", modDiff("internal/check/check.go", 5, " func Must(t testing.TB, err error) {", "-\tt.Fatal(err)", "+\t_ = err"), "", "test-support"},
		{"GoModRequireOnly", modDiff("go.mod", 3, " require (", "+\tgolang.org/x/text v0.14.0"), "", ""},
		// The code under test is not the command's.
		{"CodeUnderTest", modDiff("src/app.py", 1, " import os", "+x = 1"), "python -m pytest -q tests", ""},
		{"LatestIsNotATestWord", modDiff("src/latest.py", 1, " import os", "+x = 1"), "pytest", ""},
		{"OtherFileThanTheCommands", modDiff("src/app.py", 1, " import os", "+y = 2"), "./ci/go.sh", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			got := TestInfluencesFor(p.Files, c.cmd)
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("flagged: %v", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0].Why, c.want)):
				t.Errorf("TestInfluencesFor = %v, want one reason holding %q", got, c.want)
			}
		})
	}
}

// TestOrdinaryFilesNamedForTestsAreNotFlagged: the name rule is for programs that run or set
// up the tests; application code and documents whose names mention tests as a feature (A/B
// tests, a speed test page) and a mere import of a pytest plugin's module are not flagged, so
// that the warning keeps its meaning on ordinary repositories.
func TestOrdinaryFilesNamedForTestsAreNotFlagged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, line string }{
		{"src/experiments/ab_test_service.py", "VARIANTS = 2"},
		{"app/models/ab-test.rb", "class AbTest; end"},
		{"web/src/pages/speed-test.tsx", "export const x = 1"},
		{"docs/test.md", "How we run A/B tests."},
		{"src/app/db.py", "import pytest_asyncio  # for the type of a fixture in a docstring example"},
		{"src/latest.py", "x = 1"},
		{"api/latest/types.go", "type X struct{}"},
		{"internal/contest/score.go", "func Score() int { return 1 }"},
		{"cmd/tool/main.go", "func main() {}"},
	} {
		if why, ok := AffectsTests(c.path, []byte(addDiff(c.path, c.line))); ok {
			t.Errorf("%s is flagged: %s", c.path, why)
		}
	}
}
