package verify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Commands Detect can return.
const (
	CmdGo     = "go test ./..."
	CmdPytest = "python3 -m pytest -q"
	CmdNpm    = "npm test"
	CmdCargo  = "cargo test"
	CmdMake   = "make test"
)

// maxConfigBytes bounds how much of a configuration file Detect reads.
const maxConfigBytes = 1 << 20

// npmDefaultTest is what `npm init` writes as the test script: it means "no tests".
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

// Detect picks the test command for the checkout at repoDir, in this order: go.mod,
// pytest configuration or a tests/ folder with Python files, package.json with a real
// scripts.test, Cargo.toml, a Makefile with a test target. It returns "" when nothing
// fits. It reads only regular files directly in the checkout (symlinks are ignored, so
// a hostile repository cannot make it read outside or block on a device).
func Detect(repoDir string) string {
	switch {
	case isFile(repoDir, "go.mod"):
		return CmdGo
	case isPytestRepo(repoDir):
		return CmdPytest
	case hasNpmTest(repoDir):
		return CmdNpm
	case isFile(repoDir, "Cargo.toml"):
		return CmdCargo
	case hasMakeTest(repoDir):
		return CmdMake
	}
	return ""
}

func isFile(dir, name string) bool {
	fi, err := os.Lstat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular()
}

// readConfig returns up to maxConfigBytes of a regular file, or nil.
func readConfig(dir, name string) []byte {
	if !isFile(dir, name) {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes))
	if err != nil {
		return nil
	}
	return b
}

// hasSection reports whether an INI or TOML file has a section header starting with
// prefix, e.g. "[tool.pytest" matches "[tool.pytest.ini_options]".
func hasSection(b []byte, prefix string) bool {
	s := bufio.NewScanner(bytes.NewReader(b))
	s.Buffer(make([]byte, 0, 4096), maxConfigBytes)
	for s.Scan() {
		if strings.HasPrefix(strings.TrimSpace(s.Text()), prefix) {
			return true
		}
	}
	return false
}

func isPytestRepo(dir string) bool {
	switch {
	case isFile(dir, "pytest.ini"), isFile(dir, "conftest.py"):
		return true
	case hasSection(readConfig(dir, "pyproject.toml"), "[tool.pytest"):
		return true
	case hasSection(readConfig(dir, "setup.cfg"), "[tool:pytest]"):
		return true
	case hasSection(readConfig(dir, "tox.ini"), "[pytest]"):
		return true
	}
	return hasPythonTests(filepath.Join(dir, "tests")) || hasPythonTests(filepath.Join(dir, "test"))
}

// hasPythonTests looks for .py files in dir and one level below it.
func hasPythonTests(dir string) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".py") {
			return true
		}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, s := range sub {
			if s.Type().IsRegular() && strings.HasSuffix(s.Name(), ".py") {
				return true
			}
		}
	}
	return false
}

func hasNpmTest(dir string) bool {
	b := readConfig(dir, "package.json")
	if b == nil {
		return false
	}
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return false
	}
	test, _ := pkg.Scripts["test"].(string)
	test = strings.TrimSpace(test)
	return test != "" && test != npmDefaultTest
}

func hasMakeTest(dir string) bool {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if b := readConfig(dir, name); b != nil {
			return makeHasTarget(b, "test")
		}
	}
	return false
}

// makeHasTarget finds a rule line "a b test: deps" (not "test := value").
func makeHasTarget(b []byte, target string) bool {
	s := bufio.NewScanner(bytes.NewReader(b))
	s.Buffer(make([]byte, 0, 4096), maxConfigBytes)
	for s.Scan() {
		line := s.Text()
		if line == "" || line[0] == '\t' || line[0] == ' ' || line[0] == '#' {
			continue
		}
		targets, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(rest, "=") || strings.ContainsAny(targets, "=$") {
			continue
		}
		for _, t := range strings.Fields(targets) {
			if t == target {
				return true
			}
		}
	}
	return false
}
