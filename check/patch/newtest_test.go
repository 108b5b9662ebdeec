package patch

import (
	"strings"
	"testing"
)

// plainPy is a regression test as a model should write one: imports of pytest, the
// standard library and the project, a fixture, a parametrized test, a test class.
var plainPy = []string{
	`"""Regression tests for issue 12: average() of an empty list."""`,
	"from decimal import Decimal",
	"import pytest",
	"from unittest import mock",
	"",
	"from slug.stats import average, Stats",
	"",
	"CASES = [(1, 2), (3, 4)]  # a constant",
	"",
	"",
	"@pytest.fixture(autouse=True)",
	"def empty():",
	"    return []",
	"",
	"",
	`@pytest.mark.parametrize("a, b", CASES + [pytest.param(5, 6, marks=pytest.mark.xfail(strict=True))])`,
	"def test_average(a, b, empty):",
	"    got = average([a, b])",
	`    assert got == pytest.approx((a + b) / 2), f"got {got}"`,
	"",
	"",
	`@mock.patch("slug.stats.clock", return_value=Decimal("1.5"))`,
	"async def test_empty(clock, tmp_path):",
	"    with pytest.raises(ValueError):",
	"        average([])",
	"    s = Stats()",
	"    s.values = [1]",
	"    d = {}",
	"    d['k'] = 1",
	"",
	"",
	"class TestStats:",
	"    name = 'stats'",
	"",
	"    def test_one(self, monkeypatch):",
	`        monkeypatch.setenv("X", "1")`,
	"        self.x = 1",
	"        assert Stats().one() == 1",
	"",
	`if __name__ == "__main__":`,
	"    pytest.main()",
}

// withPy is plainPy with the lines extra put after its imports.
func withPy(extra ...string) string {
	return strings.Join(append(append(append([]string{}, plainPy[:8]...), extra...), plainPy[8:]...), "\n") + "\n"
}

func TestPlainPython(t *testing.T) {
	t.Parallel()
	if why, n := plainPython(withPy()); why != "" || n != 3 {
		t.Fatalf("plainPython(plain module) = %q, %d; want plain with 3 tests", why, n)
	}
	tests := []struct{ name, src, want string }{
		// Import-time side effects.
		{"EnvironAssigned", withPy("import os", `os.environ["PYTEST_ADDOPTS"] = "-p no:x"`), `imports "os"`},
		{"SysModules", withPy("import sys", "sys.modules['slug'] = None"), `imports "sys"`},
		{"Builtins", withPy("import builtins", "builtins.print = len"), `imports "builtins"`},
		{"BuiltinsFrom", withPy("from builtins import open as o"), `imports "builtins"`},
		{"TopLevelCall", withPy("average([1])"), "runs code at import"},
		{"TopLevelProjectCallInValue", withPy("X = average([1])"), `calls "average" at import`},
		{"TopLevelIf", withPy("if True:", "    CASES = []"), "runs code at import"},
		{"TopLevelTry", withPy("try:", "    import slug", "except ImportError:", "    pass"), "runs code at import"},
		{"AttributeOfProject", withPy("Stats.one = lambda self: 1"), "runs code at import"},
		{"Importlib", withPy("import importlib"), `imports "importlib"`},
		{"PrivatePytest", withPy("from _pytest import runner"), "private module"},
		{"PytestInternals", withPy("from pytest import Session"), "beyond pytest's plain test helpers"},
		{"PytestHook", withPy("def pytest_runtest_makereport(item, call):", "    pass"), "pytest hook"},
		{"PytestPlugins", withPy(`pytest_plugins = ["evil"]`), "pytest hook name"},
		{"StarImport", withPy("from slug import *"), "every name"},
		{"Dunder", withPy("__builtins__['len'] = max"), "dunder"},
		{"DecoratorFromProject", withPy("@average", "def test_z(): pass"), `calls "average" at import`},
		{"SkipifString", withPy(`@pytest.mark.skipif("import os; os.system('x')")`, "def test_z(): pass"), "string condition"},
		{"DefaultCallsProject", withPy("def test_z(x=average([1])): pass"), `calls "average" at import`},
		{"ClassBodyCall", withPy("class TestZ:", "    average([1])"), "runs code at import"},
		{"ClassMetaclass", withPy("class TestZ(metaclass=M):", "    pass"), "not plain names"},
		{"Semicolon", withPy("X = 1; import os"), "two statements"},
		{"CodingUTF7", "# -*- coding: utf-7 -*-\ndef test_a(): pass\n", "source encoding"},
		{"CarriageReturn", "def test_a(): pass # x\rimport os\n", "control character"},
		{"FullwidthExec", "def test_a():\n    ｅｘｅｃ('1')\n", "non-ASCII"},
		{"TabIndent", "def test_a():\n\tpass\n", "tab"},
		{"FStringNested", withPy("def test_z():", `    f"{'x'}"`), "f-string"},
		{"FStringCode", withPy("def test_z():", `    f"{open}"`), "f-string"},
		{"UnclosedString", withPy(`X = """`), "string open"},
		// Run-time reach beyond the test.
		{"BodyMonkeypatchesProject", withPy("def test_z():", "    Stats.one = lambda self: 2"), `changes "Stats.`},
		{"BodyMutatesProject", withPy("import slug", "def test_z():", "    slug.stats.CACHE.clear()"), `changes "slug" in place`},
		{"BodyDeletes", withPy("import slug", "def test_z():", "    del slug.stats.average"), `changes "slug.`},
		{"BodyGlobal", withPy("def test_z():", "    global CASES", "    CASES = []"), `uses "global"`},
		{"BodyOpen", withPy("def test_z():", "    open('tests/test_a.py', 'w').write('')"), `uses "open"`},
		{"BodyWriteText", withPy("def test_z(tmp_path):", "    (tmp_path / '/src/x.py').write_text('')"), "write_text"},
		{"BodyRequestConfig", withPy("def test_z(request):", "    request.config.pluginmanager.register(object())"), `uses "request"`},
		{"BodyPytestconfig", withPy("def test_z(pytestconfig):", "    pass"), "pytestconfig"},
		{"BodyFrameGlobals", withPy("def test_z():", "    with pytest.raises(ValueError) as e:", "        average([])", "    e.tb.tb_frame.f_globals.clear()"), "tb_frame"},
		{"BodyPatcherStarted", withPy("def test_z():", "    mock.patch('slug.stats.average').start()"), ".start"},
		{"BodyPatcherEntered", withPy("import contextlib", "def test_z():", "    contextlib.ExitStack().enter_context(mock.patch('slug.stats.average'))"), ".enter_context"},
		{"BodyPytestMain", withPy("def test_z():", "    pytest.main(['-p', 'x'])"), "pytest.main"},
		{"BodyEval", withPy("def test_z():", "    eval('1')"), `uses "eval"`},
		{"BodyDecimalContext", withPy("import decimal", "def test_z():", "    decimal.getcontext().prec = 1"), "getcontext"},
		{"OneLineBody", withPy("def test_z(): Stats.one = None"), `changes "Stats.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			why, _ := plainPython(tt.src)
			if why == "" || !strings.Contains(why, tt.want) {
				t.Errorf("plainPython = %q, want a refusal with %q", why, tt.want)
			}
		})
	}
}

const plainGoSrc = `package stats

import (
	"errors"
	"testing"
)

type testCase struct{ in []int; want int }

var cases = []testCase{{in: []int{1, 2}, want: 1}}

const eps = 1e-9

// TestAverage is the regression test.
func TestAverage(t *testing.T) {
	for i, c := range cases {
		if got := Average(c.in); got != c.want {
			t.Errorf("%d: got %d", i, got)
		}
	}
	var total int
	total += 2
	x, err := Parse("1")
	if errors.Is(err, ErrEmpty) {
		x.N = 3
	}
	t.Setenv("A", "b")
	func(n int) { n++ }(1)
}

func FuzzAverage(f *testing.F) {
	f.Fuzz(func(t *testing.T, n int) { _ = Average([]int{n}) })
}
`

func TestPlainGo(t *testing.T) {
	t.Parallel()
	if why, n := plainGo(plainGoSrc); why != "" || n != 2 {
		t.Fatalf("plainGo(plain file) = %q, %d; want plain with 2 tests", why, n)
	}
	// A method on a type the file declares (a fake) stays plain, the type declared before or
	// after it, alone or in a group.
	fakes := plainGoSrc + "func (f *fakeStore) Get() int { return 1 }\n\ntype fakeStore struct{}\n\ntype (\n\tother int\n\tgen[T any] struct{ v T }\n)\n\nfunc (o other) String() string { return \"\" }\nfunc (g gen[T]) V() T { return g.v }\nfunc (testCase) Name() string { return \"\" }\n"
	if why, n := plainGo(fakes); why != "" || n != 2 {
		t.Fatalf("plainGo(methods on the file's own types) = %q, %d; want plain with 2 tests", why, n)
	}
	body := func(lines string) string {
		return strings.Replace(plainGoSrc, "\tt.Setenv(\"A\", \"b\")\n", lines+"\n", 1)
	}
	tests := []struct{ name, src, want string }{
		{"TestMain", plainGoSrc + "func TestMain(m *testing.M) { m.Run() }\n", "TestMain"},
		{"Init", plainGoSrc + "func init() { cases = nil }\n", "init"},
		{"VarCall", plainGoSrc + "var x = Setup()\n", "calls something at start-up"},
		{"VarCallOnNextLine", plainGoSrc + "var x = 1 +\n\tSetup()\n", "calls something at start-up"},
		{"VarFuncLiteral", plainGoSrc + "var x = func() int { return 1 }()\n", "calls something at start-up"},
		{"Linkname", "package stats\n\n//go:linkname x runtime.x\nfunc TestA(t *testing.T) {}\n", "go:linkname"},
		{"BlankImport", strings.Replace(plainGoSrc, `"errors"`, `_ "net/http/pprof"`, 1), "side effects"},
		{"Unsafe", strings.Replace(plainGoSrc, `"errors"`, `"unsafe"`, 1), `"unsafe"`},
		{"OsExec", strings.Replace(plainGoSrc, `"errors"`, `"os/exec"`, 1), `"os/exec"`},
		{"Setenv", strings.Replace(body("\tos.Setenv(\"GOFLAGS\", \"x\")"), `"errors"`, "\"errors\"\n\t\"os\"", 1), "os.Setenv"},
		{"WriteFile", strings.Replace(body("\tos.WriteFile(\"testdata/want.txt\", nil, 0o644)"), `"errors"`, "\"errors\"\n\t\"os\"", 1), "os.WriteFile"},
		{"PackageVar", body("\tdefaultLimit = 0"), `"defaultLimit"`},
		{"PackageVarField", body("\tconfig.Strict = false"), `"config"`},
		{"OtherPackageVar", body("\terrors.ErrUnsupported = nil"), "another package's state"},
		{"ShadowedInBlock", body("\t{\n\t\tlimit := 1\n\t\t_ = limit\n\t}\n\tlimit = 0"), `"limit"`},
		{"ShadowedInIf", body("\tif limit := 1; limit > 0 {\n\t}\n\tlimit = 0"), `"limit"`},
		{"CaseDecl", body("\tselect {\n\tcase v := <-ch:\n\t\t_ = v\n\t}"), "case clause"},
		{"Pointer", body("\t*p = 1"), "pointer"},
		{"ParenPointer", body("\t(*p).n = 1"), "pointer"},
		{"FuncTypeThenCall", body("\tvar cb func(int)\n\t_ = cb\n\tuse(limit)\n\tif true {\n\t\tlimit = 0\n\t}"), `"limit"`},
		// A method on a type of the package under test is part of that type in every test of
		// the package: MarshalJSON, String or Error changes what the code under test does (a
		// failing golden test of Render passes once the test file gives Result a MarshalJSON).
		{"MethodOnPackageType", plainGoSrc + "func (Result) MarshalJSON() ([]byte, error) { return []byte(`{}`), nil }\n", `"Result"`},
		{"MethodOnPackagePointer", plainGoSrc + "func (r *Result) String() string { return \"\" }\n", `"Result"`},
		{"MethodOnGenericPackageType", plainGoSrc + "func (s Set[T]) Len() int { return 0 }\n", `"Set"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			why, _ := plainGo(tt.src)
			if why == "" || !strings.Contains(why, tt.want) {
				t.Errorf("plainGo = %q, want a refusal with %q", why, tt.want)
			}
		})
	}
}

// TestTrust is the rule as the report sees it, on whole patches.
func TestTrust(t *testing.T) {
	t.Parallel()
	plain := strings.Split(strings.TrimSuffix(withPy(), "\n"), "\n")
	goLines := strings.Split(strings.TrimSuffix(plainGoSrc, "\n"), "\n")
	tests := []struct {
		name     string
		diff     string
		flagged  []string // paths that keep the warning
		newTests []NewTest
	}{
		{"PlainNewTestFile", addDiff("tests/test_average.py", plain...), nil, []NewTest{{"tests/test_average.py", 3}}},
		{"PlainNewGoTestFile", addDiff("stats/average_test.go", goLines...), nil, []NewTest{{"stats/average_test.go", 2}}},
		{"Conftest", addDiff("tests/conftest.py", "import pytest", "@pytest.fixture", "def x(): return 1"), []string{"tests/conftest.py"}, nil},
		{"SideEffect", addDiff("tests/test_a.py", "import os", "os.environ['X'] = '1'", "def test_a(): pass"), []string{"tests/test_a.py"}, nil},
		{"ExistingTestChanged", modDiff("tests/test_a.py", 3, " def test_a():", "-    assert f() == 1", "+    assert f() == 2"), []string{"tests/test_a.py"}, nil},
		{"PytestIni", addDiff("pytest.ini", "[pytest]", "addopts = -p no:cacheprovider"), []string{"pytest.ini"}, nil},
		{"PyprojectPytestSection", modDiff("pyproject.toml", 20, " [tool.pytest.ini_options]", "+addopts = \"-q\""), []string{"pyproject.toml"}, nil},
		{"GoTestMain", addDiff("stats/main_test.go", "package stats", "import \"testing\"", "func TestMain(m *testing.M) {}"), []string{"stats/main_test.go"}, nil},
		{"GoInit", addDiff("stats/x_test.go", "package stats", "func init() {}"), []string{"stats/x_test.go"}, nil},
		{"HelperByName", addDiff("tests/test_helpers.py", "def test_a(): pass"), []string{"tests/test_helpers.py"}, nil},
		{"UnderFixtures", addDiff("tests/fixtures/test_a.py", "def test_a(): pass"), []string{"tests/fixtures/test_a.py"}, nil},
		{"InitPy", addDiff("tests/__init__.py", ""), []string{"tests/__init__.py"}, nil},
		{"NonTestNameUnderTests", addDiff("tests/common_checks.py", "def check(): pass"), []string{"tests/common_checks.py"}, nil},
		{"JSTest", addDiff("src/a.test.js", "test('a', () => {})"), []string{"src/a.test.js"}, nil},
		{"CopiedTest", "diff --git a/tests/test_a.py b/tests/test_b.py\nsimilarity index 100%\ncopy from tests/test_a.py\ncopy to tests/test_b.py\n", []string{"tests/test_b.py"}, nil},
		{"ImportedByAnotherNewFile", addDiff("tests/test_a.py", "def test_a(): pass") + addDiff("tests/test_b.py", "from test_a import test_a as check", "def test_b(): pass"),
			[]string{"tests/test_a.py"}, []NewTest{{"tests/test_b.py", 1}}},
		{"ImportedByChangedTest", addDiff("tests/test_new.py", "def ok(): return True") + modDiff("tests/test_old.py", 1, "+from test_new import ok", " def test_old():"),
			[]string{"tests/test_new.py", "tests/test_old.py"}, nil},
		{"SymlinkedTest", symlinkDiff("tests/test_l.py", "../conftest.py"), []string{"tests/test_l.py"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(tt.diff))
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, tt.diff)
			}
			infl, news := Trust(p.Files, "")
			var flagged []string
			for _, f := range infl {
				flagged = append(flagged, f.Path)
			}
			if strings.Join(flagged, ",") != strings.Join(tt.flagged, ",") {
				t.Errorf("flagged %q, want %q (%+v)", flagged, tt.flagged, infl)
			}
			if len(news) != len(tt.newTests) || (len(news) > 0 && news[0] != tt.newTests[0]) {
				t.Errorf("new tests %+v, want %+v", news, tt.newTests)
			}
		})
	}
}

// A new test file that keeps the warning says why in its reason.
func TestTrustSaysWhyANewTestKeepsTheWarning(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte(addDiff("tests/test_a.py", "import sys", "sys.modules['slug'] = None", "def test_a(): pass")))
	if err != nil {
		t.Fatal(err)
	}
	infl, _ := Trust(p.Files, "")
	if len(infl) != 1 || !strings.Contains(infl[0].Why, "is a new test file") || !strings.Contains(infl[0].Why, `it imports "sys"`) {
		t.Errorf("Trust = %+v, want tests/test_a.py flagged as a new test file that imports sys", infl)
	}
}

func FuzzPlainPython(f *testing.F) {
	f.Add(withPy())
	f.Add("def test_a():\n    x = f'{y}' + \"\"\"a\nb\"\"\" \\\n  + r'\\''\n")
	f.Add("class TestA(Base):\n    @pytest.mark.parametrize('a', [1])\n    def test_a(self, a): pass\n")
	f.Add("# coding: utf-7\nx = (\n")
	f.Add("@x\n@\ndef\nasync\nfrom . import\nimport\n")
	f.Fuzz(func(t *testing.T, src string) {
		why, n := plainPython(src) // must not panic
		if why != "" && n != 0 {
			t.Errorf("plainPython refused (%q) and counted %d tests", why, n)
		}
	})
}

func FuzzPlainGo(f *testing.F) {
	f.Add(plainGoSrc)
	f.Add("package x\nvar (\n\ta = 1\n\tb = f()\n)\nimport (\n\t_ \"x\"\n)\n")
	f.Add("func\nfunc (\nvar\nimport\n`\n/*")
	f.Fuzz(func(t *testing.T, src string) {
		why, n := plainGo(src) // must not panic
		if why != "" && n != 0 {
			t.Errorf("plainGo refused (%q) and counted %d tests", why, n)
		}
	})
}
