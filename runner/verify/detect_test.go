package verify

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"Empty", nil, ""},
		{"GoMod", map[string]string{"go.mod": "module x\n", "package.json": `{"scripts":{"test":"jest"}}`}, CmdGo},
		{"PytestIni", map[string]string{"pytest.ini": "[pytest]\n"}, CmdPytest},
		{"Pyproject", map[string]string{"pyproject.toml": "[project]\nname='x'\n\n  [tool.pytest.ini_options]\n"}, CmdPytest},
		{"PyprojectWithoutPytest", map[string]string{"pyproject.toml": "[tool.black]\n"}, ""},
		{"SetupCfg", map[string]string{"setup.cfg": "[metadata]\n[tool:pytest]\naddopts=-q\n"}, CmdPytest},
		{"ToxIni", map[string]string{"tox.ini": "[tox]\n[pytest]\n"}, CmdPytest},
		{"Conftest", map[string]string{"conftest.py": ""}, CmdPytest},
		{"TestsFolder", map[string]string{"tests/test_a.py": ""}, CmdPytest},
		{"TestsSubfolder", map[string]string{"tests/unit/test_a.py": ""}, CmdPytest},
		{"TestsFolderNoPython", map[string]string{"tests/a.js": ""}, ""},
		{"Npm", map[string]string{"package.json": `{"scripts":{"test":"vitest run"}}`}, CmdNpm},
		{"NpmDefaultScript", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, ""},
		{"NpmNoScript", map[string]string{"package.json": `{"name":"x"}`}, ""},
		{"NpmGarbage", map[string]string{"package.json": `{"scripts":`}, ""},
		{"NpmScriptNotString", map[string]string{"package.json": `{"scripts":{"test":7}}`}, ""},
		{"Cargo", map[string]string{"Cargo.toml": "[package]\n"}, CmdCargo},
		{"Make", map[string]string{"Makefile": "all: build\n\nbuild test: deps\n\tgo test\n"}, CmdMake},
		{"MakeLowercaseWins", map[string]string{"makefile": "test:\n\ttrue\n"}, CmdMake},
		{"MakeNoTarget", map[string]string{"Makefile": "test := 1\ntests: x\n\ttest: inside recipe\n"}, ""},
		{"MakeVariableTarget", map[string]string{"Makefile": "$(X) test: y\n"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			if got := Detect(dir); got != tc.want {
				t.Errorf("Detect = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDetectIgnoresSymlinks: a hostile checkout cannot point Detect at host files or
// make it block on a FIFO.
func TestDetectIgnoresSymlinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"go.mod": "module x\n", "pyproject.toml": "[tool.pytest.ini_options]\n"})
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "pyproject.toml"} {
		if err := os.Symlink(filepath.Join(outside, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "tests")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if got := Detect(dir); got != "" {
		t.Errorf("Detect followed a symlink: %q", got)
	}
}

func TestPlanFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		want Plan
	}{
		{CmdGo, Plan{Display: CmdGo, Shell: "go test -json ./...", Format: FormatGoJSON}},
		{"  go   test -run TestX ./pkg/... ", Plan{Display: "go   test -run TestX ./pkg/...", Shell: "go test -json -run TestX ./pkg/...", Format: FormatGoJSON}},
		{"go test", Plan{Display: "go test", Shell: "go test -json", Format: FormatGoJSON}},
		{"go test -json ./...", Plan{Display: "go test -json ./...", Shell: "go test -json ./..."}},
		{"go test ./... | tee log", Plan{Display: "go test ./... | tee log", Shell: "go test ./... | tee log"}},
		{CmdPytest, Plan{Display: CmdPytest, Shell: "rm -f " + JUnitPath + " && " + CmdPytest + " --junitxml=" + JUnitPath, ReportFile: JUnitPath, Format: FormatJUnit}},
		{"pytest tests/unit", Plan{Display: "pytest tests/unit", Shell: "rm -f " + JUnitPath + " && pytest tests/unit --junitxml=" + JUnitPath, ReportFile: JUnitPath, Format: FormatJUnit}},
		{"python3.12 -m pytest -x", Plan{Display: "python3.12 -m pytest -x", Shell: "rm -f " + JUnitPath + " && python3.12 -m pytest -x --junitxml=" + JUnitPath, ReportFile: JUnitPath, Format: FormatJUnit}},
		{"pytest -k 'a or b'", Plan{Display: "pytest -k 'a or b'", Shell: "pytest -k 'a or b'"}},
		{"pytest; curl x", Plan{Display: "pytest; curl x", Shell: "pytest; curl x"}},
		{"python3 -m unittest", Plan{Display: "python3 -m unittest", Shell: "python3 -m unittest -v", Format: FormatUnittest}},
		{"python3 -m unittest discover -s tests -q", Plan{Display: "python3 -m unittest discover -s tests -q", Shell: "python3 -m unittest discover -s tests -q -v", Format: FormatUnittest}},
		{"python -m unittest tests.test_mod", Plan{Display: "python -m unittest tests.test_mod", Shell: "python -m unittest tests.test_mod -v", Format: FormatUnittest}},
		{"python3 -m unittest -k 'a b'", Plan{Display: "python3 -m unittest -k 'a b'", Shell: "python3 -m unittest -k 'a b'"}},
		{"python3 -m unittestx", Plan{Display: "python3 -m unittestx", Shell: "python3 -m unittestx"}},
		{CmdNpm, Plan{Display: CmdNpm, Shell: CmdNpm}},
		{"tox -e py311", Plan{Display: "tox -e py311", Shell: "tox -e py311"}},
		{"", Plan{}},
	}
	for _, tc := range tests {
		if got := PlanFor(tc.cmd); got != tc.want {
			t.Errorf("PlanFor(%q) = %+v, want %+v", tc.cmd, got, tc.want)
		}
	}
}
