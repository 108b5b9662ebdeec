package patch

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TestInfluence is a file of a patch that can change what the tests report without any
// change to the code under test (test configuration, plugins, interpreter start-up hooks,
// CI, the tests themselves), and why, in plain words.
type TestInfluence struct {
	Path string
	Why  string
}

// TestInfluences returns the files that AffectsTests flags, in patch order, but for the
// new test files that only add tests (Trust lists those). A renamed file is judged under
// its new name, then its old one.
func TestInfluences(files []File) []TestInfluence {
	out, _ := Trust(files, "")
	return out
}

// TestInfluencesFor is TestInfluences for a run whose tests are testCommand: a file the
// command names (a script, a Python module given to -m, a Makefile given to -f) is flagged
// too, whatever its name.
func TestInfluencesFor(files []File, testCommand string) []TestInfluence {
	out, _ := Trust(files, testCommand)
	return out
}

// commandRuns returns why testCommand makes a change to the file at p (repository-relative)
// change what the tests report, or "" when the command does not name it. The command's words
// are read without a shell (quotes and shell punctuation dropped; "./" and "/workspace/"
// trimmed; a word after `cd` is the folder the next words are relative to): a word that is the
// path names the file; a dotted name after -m or -p (a module python runs, a plugin pytest
// loads), and every dotted name after `-m unittest`, names a module's file or package.
func commandRuns(p, testCommand string) string {
	if testCommand == "" {
		return ""
	}
	words := strings.Fields(strings.NewReplacer(`"`, " ", "'", " ", ";", " ", "&&", " ", "||", " ", "|", " ", "(", " ", ")", " ", "=", " ", "&", " ").Replace(testCommand))
	dir, modules := "", false
	for i, w := range words {
		w = strings.TrimPrefix(strings.TrimPrefix(w, "/workspace/"), "./")
		if i > 0 && words[i-1] == "cd" {
			dir = path.Clean(path.Join(dir, w))
			continue
		}
		for _, cand := range []string{path.Clean(w), path.Clean(path.Join(dir, w))} {
			if cand == p {
				return "the test command (" + quote(testCommand) + ") runs or reads it: changing it changes what the tests report"
			}
		}
		if i > 0 && words[i-1] == "-m" && w == "unittest" {
			modules = true
		}
		dotted := modules || i > 0 && (words[i-1] == "-m" || words[i-1] == "-p")
		if dotted && !strings.HasPrefix(w, "-") && w != "" {
			mod := strings.ReplaceAll(strings.TrimSuffix(w, ".py"), ".", "/")
			for _, root := range []string{"", dir} {
				m := path.Join(root, mod)
				if p == m+".py" || strings.HasPrefix(p, m+"/") {
					return "the test command (" + quote(testCommand) + ") runs or loads its module: changing it changes what the tests report"
				}
			}
		}
	}
	return ""
}

// AffectsTests reports whether this change can change what the tests report without
// changing the code under test, and why. See AffectsTests (the function) for the rules;
// for a test file the answer also says whether it is added, changed, renamed or deleted.
func (f File) AffectsTests() (why string, ok bool) {
	for _, name := range names(f) {
		why, ok = AffectsTests(name, f.raw)
		if !ok {
			continue
		}
		if why == whyTestFile {
			why = testFileWhy(f)
		}
		if f.Status == StatusRenamed && name == f.OldPath {
			why = "renamed from " + strconv.Quote(f.OldPath) + ", which " + why
		}
		return why, true
	}
	return "", false
}

// AffectsTests reports whether a change to the file at p (a repository-relative path) can
// change what the tests report without any change to the code under test, and why, in
// plain words. diff is that file's part of the patch, from its "diff --git" line, or nil.
//
// Flagged by the path alone: pytest's conftest.py and pytest.ini, coverage settings,
// sitecustomize.py, usercustomize.py and *.pth files (Python runs them at start-up),
// noxfile.py, Jest, Vitest, Karma, Mocha, AVA, Playwright and Cypress configuration, CI
// configuration (.github/workflows and actions, GitLab, CircleCI, Travis, Azure, Jenkins,
// Buildkite, ...), Cargo's configuration (it can name the program that runs the tests),
// frognano's own settings, and test files (IsTestPath).
//
// Flagged by what the diff changes: setup.cfg, tox.ini and pyproject.toml when a changed
// line lies in a test section ([tool.pytest.ini_options], [tool:pytest], [pytest],
// coverage, tox, testenv, a pytest11 entry point, ...) or mentions a test word; Makefiles
// when a changed line lies in or names a test or check target or mentions tests;
// package.json and vite.config.* when a changed hunk mentions a test runner; any Go file
// whose added lines define TestMain; Go test-support code (a file in a folder named as Go
// names its test helpers, such as gittest or testutil, or whose hunks use package testing). When the diff cannot tell (no diff, a binary change,
// a hunk whose section is not in view), these files are flagged too, saying so.
//
// A new test file is flagged here, by its path; Trust, which reads its whole text and the
// rest of the patch, lists it as a new test instead when it only adds tests.
func AffectsTests(p string, diff []byte) (why string, ok bool) {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	if why, ok := byName(lp, base); ok {
		return why, true
	}
	hs, text := hunks(diff)
	switch {
	case base == "pyproject.toml":
		// TOML spells a key with escapes too (tool."py\u0074est" is tool.pytest): the lines
		// are read as TOML reads them.
		return sectionVerdict(p, tomlDecoded(hs), text, iniSection, isTestSection, "section")
	case base == "setup.cfg" || base == "tox.ini":
		return sectionVerdict(p, hs, text, iniSection, isTestSection, "section")
	case isMakefile(base):
		// A variable set outside every target (PY ?= true) changes what the test target runs
		// as surely as its recipe does.
		if line := makeDirective(hs); line != "" {
			return "changes the Makefile variable or directive " + line + ", which can change what `make test` runs", true
		}
		return sectionVerdict(p, hs, text, makeTarget, isTestTarget, "target")
	case base == "package.json":
		return mentionVerdict(p, hs, text, "package.json's test script or test runner settings")
	case strings.HasPrefix(base, "vite.config."):
		return mentionVerdict(p, hs, text, "Vitest's settings (the test section of the Vite configuration)")
	case base == "go.mod":
		return goModVerdict(hs, text)
	}
	if strings.HasSuffix(base, ".go") && definesTestMain(hs) {
		return "defines TestMain, which runs in place of the test binary's own main and decides its exit status", true
	}
	if strings.HasSuffix(base, ".go") && !IsTestPath(p) && (goTestSupportDir(lp) || usesPackageTesting(hs)) {
		return whyGoTestSupport, true
	}
	if strings.HasSuffix(base, ".py") {
		if hook := pythonTestHook(hs); hook != "" {
			return "defines or names " + hook + ", which pytest or unittest calls to collect, run or judge the tests", true
		}
	}
	if IsTestPath(p) {
		return whyTestFile, true
	}
	return "", false
}

// whyTestFile stands for "a test file" until File.AffectsTests says what happened to it.
const whyTestFile = "is a test file: changing the tests changes what they report"

func testFileWhy(f File) string {
	switch f.Status {
	case StatusAdded, StatusCopied:
		return "is a new test file: its code runs with the whole suite and can change other tests' results"
	case StatusDeleted:
		return "deletes a test file: its tests no longer run"
	case StatusRenamed:
		return "renames a test file: the tests it holds may no longer be collected"
	}
	return "changes an existing test file: the tests may no longer check what they checked"
}

const (
	whyPytest   = "pytest's configuration: it can deselect, skip or reinterpret tests and load plugins"
	whyStartup  = "Python runs it at the start of every interpreter, before any test"
	whyCI       = "CI configuration: it decides which checks run on the pull request"
	whyJSRunner = "test runner configuration: it decides which tests run, how they are transformed and what counts as a pass"
)

var testConfigNames = map[string]string{
	"conftest.py":             "pytest loads it before the tests in its folder; its fixtures and hooks can change or hide test results",
	"pytest.ini":              whyPytest,
	".pytest.ini":             whyPytest,
	"pytest.toml":             whyPytest,
	".pytest.toml":            whyPytest,
	".coveragerc":             "coverage settings, which can decide whether a test run fails",
	"sitecustomize.py":        whyStartup,
	"usercustomize.py":        whyStartup,
	"noxfile.py":              "nox sessions: they decide how the test suites run",
	"mocha.opts":              whyJSRunner,
	".npmrc":                  "npm's settings: they can change the shell and the scripts that `npm test` runs",
	".yarnrc":                 "yarn's settings: they can change what `yarn test` runs",
	".yarnrc.yml":             "yarn's settings: they can change what `yarn test` runs",
	"go.work":                 "a Go workspace: it can replace the modules the tests build against",
	"go.work.sum":             "a Go workspace: it can replace the modules the tests build against",
	"jenkinsfile":             whyCI,
	".gitlab-ci.yml":          whyCI,
	".travis.yml":             whyCI,
	"azure-pipelines.yml":     whyCI,
	"bitbucket-pipelines.yml": whyCI,
	"appveyor.yml":            whyCI,
	".appveyor.yml":           whyCI,
	".drone.yml":              whyCI,
}

// jsRunnerPrefixes start the base names of JavaScript test runners' configuration and
// set-up files.
var jsRunnerPrefixes = []string{
	"jest.config.", "jest.setup.", "jest.preset.", "setuptests.", "vitest.config.", "vitest.workspace.",
	"vitest.setup.", "karma.conf.", ".mocharc", "ava.config.", "playwright.config.", "cypress.config.",
}

var ciDirs = []string{".github/workflows/", ".github/actions/", ".circleci/", ".buildkite/", ".gitlab/ci/"}

func byName(lp, base string) (string, bool) {
	if why, ok := testConfigNames[base]; ok {
		return why, true
	}
	if m := shadowedModule(lp); m != "" {
		return "takes the place of the installed Python module " + strconv.Quote(m) +
			": `python -m` imports it from the repository first, so it can replace the test runner or a library the tests use", true
	}
	if strings.HasSuffix(base, ".pth") {
		return "Python runs its import lines at the start of every interpreter, before any test", true
	}
	for _, pre := range jsRunnerPrefixes {
		if strings.HasPrefix(base, pre) {
			return whyJSRunner, true
		}
	}
	if strings.HasPrefix(base, "babel.config.") || strings.HasPrefix(base, ".babelrc") {
		return "Babel's configuration: Jest's default transform rewrites every test file with it", true
	}

	for _, d := range ciDirs {
		if strings.HasPrefix(lp, d) {
			return whyCI, true
		}
	}
	if dirs := strings.Split(lp, "/"); len(dirs) > 1 {
		for _, d := range dirs[:len(dirs)-1] {
			if d == "vendor" || d == "node_modules" {
				return "is vendored code of a dependency (" + d + "/): the tests build against it, and a vendored test library (testify, expect) decides what counts as a pass", true
			}
		}
	}
	switch {
	case lp == ".cargo/config" || lp == ".cargo/config.toml":
		return "Cargo's configuration: it can name the program that runs the tests", true
	case lp == ".frognano/test-command":
		return "names the test command frognano runs on this repository", true
	case strings.HasPrefix(lp, ".frognano/"):
		return "frognano's settings for this repository", true
	}
	if testScriptName(base) && !IsTestPath(lp) {
		return whyTestScript, true
	}
	return "", false
}

// hunk is one "@@" hunk of a text diff: where it starts in the old file and its lines,
// each with its leading ' ', '-' or '+'.
type hunk struct {
	oldStart int
	lines    []string
}

// hunks reads the hunks of one file's diff. text is false when the diff cannot show the
// change (there is none, or the change is binary); a diff without hunks (a mode change,
// a pure rename) shows that no line changed.
func hunks(diff []byte) (hs []hunk, text bool) {
	if diff == nil || bytes.Contains(diff, []byte("\nGIT binary patch\n")) {
		return nil, false
	}
	for _, l := range bytes.Split(diff, []byte("\n")) {
		line := string(l)
		if strings.HasPrefix(line, "@@ ") {
			start := 0
			if rest, ok := strings.CutPrefix(line, "@@ -"); ok {
				n, _, _ := strings.Cut(rest, " ")
				n, _, _ = strings.Cut(n, ",")
				start, _ = strconv.Atoi(n)
			}
			hs = append(hs, hunk{oldStart: start})
			continue
		}
		if len(hs) == 0 || line == "" {
			continue
		}
		switch line[0] {
		case ' ', '-', '+':
			h := &hs[len(hs)-1]
			h.lines = append(h.lines, line)
		}
	}
	return hs, true
}

// unknownSection stands for a section the diff does not show.
const unknownSection = "\x00unknown"

// sectionVerdict flags a file of sections (INI/TOML sections, Makefile targets) when a
// changed line lies in a test section, names one, mentions a test word, or when the diff
// does not show which section it lies in.
func sectionVerdict(p string, hs []hunk, text bool, header func(string) (string, bool), isTest func(string) bool, kind string) (string, bool) {
	name := path.Base(p)
	if !text {
		return fmt.Sprintf("changes %s, whose test settings the diff does not show (binary or no text change)", name), true
	}
	unknown := false
	for _, h := range hs {
		// A hunk that starts at the top of the file shows every section header above its
		// changes; otherwise the section of a change is known only once a header is seen.
		oldCur, newCur := unknownSection, unknownSection
		if h.oldStart <= 1 {
			oldCur, newCur = "", ""
		}
		for _, l := range h.lines {
			kindc, body := l[0], l[1:]
			sec, isHeader := header(body)
			if kindc == ' ' {
				if isHeader {
					oldCur, newCur = sec, sec
				}
				continue
			}
			cur := newCur
			if kindc == '-' {
				cur = oldCur
			}
			touched := []string{cur}
			if isHeader {
				// Adding or removing a header moves the lines below it between sections.
				touched = append(touched, sec)
				if kindc == '-' {
					oldCur = sec
				} else {
					newCur = sec
				}
			}
			for _, t := range touched {
				switch {
				case t == unknownSection:
					unknown = true
				case isTest(t):
					return fmt.Sprintf("changes the %s %s of %s (test settings)", strconv.Quote(t), kind, name), true
				}
			}
			if w := testWord(body); w != "" {
				return fmt.Sprintf("a changed line of %s mentions %s", name, w), true
			}
		}
	}
	if unknown {
		return fmt.Sprintf("changes %s in a %s the diff does not show; it may hold test settings", name, kind), true
	}
	return "", false
}

// iniSection reads an INI or TOML section header: "[tool:pytest]", "[[tool.x]]".
func iniSection(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return "", false
	}
	t = strings.TrimLeft(t, "[")
	name, _, ok := strings.Cut(t, "]")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(name), true
}

func isTestSection(name string) bool {
	l := strings.ToLower(name)
	for _, w := range []string{"test", "cov", "tox", "nose"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// makeTarget reads a Makefile rule line "name other: prerequisites" (not a recipe line,
// not a variable assignment such as "X := y").
func makeTarget(line string) (string, bool) {
	if line == "" || line[0] == '\t' || line[0] == ' ' || line[0] == '#' {
		return "", false
	}
	i := strings.IndexByte(line, ':')
	if i <= 0 || strings.ContainsAny(line[:i], "=") || strings.HasPrefix(line[i:], ":=") || strings.HasPrefix(line[i:], "::=") {
		return "", false
	}
	return strings.TrimSpace(line[:i]), true
}

// makeDirective returns the first changed line of the hunks that is not a recipe line but a
// variable assignment or a directive (include, export, override, define, vpath, ...), or "".
func makeDirective(hs []hunk) string {
	for _, sign := range []byte{'+', '-'} { // what the patch writes, before what it removes
		if line := makeDirectiveSigned(hs, sign); line != "" {
			return line
		}
	}
	return ""
}

func makeDirectiveSigned(hs []hunk, sign byte) string {
	for _, h := range hs {
		for _, l := range h.lines {
			if l == "" || l[0] != sign {
				continue
			}
			body := l[1:]
			if body == "" || body[0] == '\t' || strings.HasPrefix(strings.TrimSpace(body), "#") {
				continue
			}
			word, _, _ := strings.Cut(strings.TrimSpace(body), " ")
			switch word {
			case "include", "-include", "sinclude", "export", "unexport", "override", "define", "endef", "vpath", "undefine":
				return quote(strings.TrimSpace(body))
			}
			if i := strings.IndexByte(body, '='); i > 0 {
				if _, isRule := makeTarget(body); !isRule || strings.Contains(body[:i], ":") {
					return quote(strings.TrimSpace(body))
				}
			}
		}
	}
	return ""
}

func isTestTarget(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "test") || strings.Contains(l, "check")
}

// isMakefile reports whether a base name (lower case) is a Makefile or one a Makefile
// includes by its usual names: Makefile, GNUmakefile, Makefile.common, rules.mk, build.mak.
func isMakefile(base string) bool {
	switch {
	case base == "makefile" || base == "gnumakefile":
		return true
	case strings.HasPrefix(base, "makefile.") || strings.HasPrefix(base, "gnumakefile."):
		return true
	}
	for _, ext := range []string{".mk", ".mak", ".make"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return false
}

const whyTestScript = "its name says it runs or sets up the tests (a test script, runner or plugin): changing it changes what the tests report"

// testScriptWords are the words that, first or last in the name of a script or program
// (split at '_', '-' and '.'), say it runs or sets up the tests: run_tests.sh, runtests.py,
// scripts/test.sh, test.js, pytest_plugin.py. A name with the word inside (ab_test_service.py)
// or a file that is no program (speed-test.tsx, test.md) is left alone.
var testScriptWords = map[string]bool{"test": true, "tests": true, "runtests": true, "runtest": true, "pytest": true, "testrunner": true}

// scriptExts are the extensions of programs a test command runs directly (a shell script,
// Python, Node, Perl) and "" (an executable without one).
var scriptExts = map[string]bool{"": true, ".sh": true, ".bash": true, ".zsh": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".cts": true, ".pl": true}

// testScriptName reports whether a base name (lower case) is a script whose first or last
// word is one of testScriptWords.
func testScriptName(base string) bool {
	ext := path.Ext(base)
	if !scriptExts[ext] {
		return false
	}
	ws := strings.FieldsFunc(strings.TrimSuffix(base, ext), func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	return len(ws) > 0 && (testScriptWords[ws[0]] || testScriptWords[ws[len(ws)-1]])
}

// pythonHook matches the definitions by which a Python file takes part in collecting, running
// or judging tests wherever it lies: a pytest hook (a function named pytest_*), the plugins a
// module names (pytest_plugins = ...), and unittest's load_tests protocol. A mention (an
// import of pytest_asyncio) is not one.
var pythonHook = regexp.MustCompile(`\bdef\s+(pytest_[A-Za-z0-9_]+|load_tests)\b|\b(pytest_plugins|load_tests)\s*(:[^=]*)?[+]?=`)

// pythonTestHook returns the first pytest hook, pytest_plugins or load_tests that a changed
// line names, quoted, or "".
func pythonTestHook(hs []hunk) string {
	for _, h := range hs {
		for _, l := range h.lines {
			if l[0] == ' ' {
				continue
			}
			if m := pythonHook.FindStringSubmatch(l[1:]); m != nil {
				name := m[1]
				if name == "" {
					name = m[2]
				}
				return "`" + name + "`"
			}
		}
	}
	return ""
}

// tomlDecoded returns the hunks with each line's escapes decoded as TOML decodes them in
// basic strings and quoted keys (\uXXXX, \UXXXXXXXX, \xHH of TOML 1.1, \t and the other
// one-letter escapes), so that a section or key a line spells with escapes reads as itself.
// Quotes stay: a quoted key still reads as its words.
func tomlDecoded(hs []hunk) []hunk {
	out := make([]hunk, len(hs))
	for i, h := range hs {
		out[i] = hunk{oldStart: h.oldStart, lines: make([]string, len(h.lines))}
		for j, l := range h.lines {
			out[i].lines[j] = l[:1] + tomlUnescape(l[1:])
		}
	}
	return out
}

func tomlUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		n := 0
		switch s[i+1] {
		case 'u':
			n = 4
		case 'U':
			n = 8
		case 'x':
			n = 2
		case 't':
			b.WriteByte('\t')
			i++
			continue
		case 'n', 'r', 'f', 'b', 'e':
			b.WriteByte(' ')
			i++
			continue
		case '"', '\\':
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if n > 0 && i+2+n <= len(s) {
			if v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
				b.WriteRune(rune(v))
				i += 1 + n
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// testWords are words whose appearance on a changed line of a configuration file is
// reason enough to look at it as test configuration.
var testWords = []string{"pytest", "test", "unittest", "nose", "coverage", "addopts", "jest", "mocha", "vitest"}

func testWord(line string) string {
	l := strings.ToLower(line)
	for _, w := range testWords {
		if strings.Contains(l, w) {
			return strconv.Quote(w)
		}
	}
	return ""
}

// mentionVerdict flags a file that holds test settings among others (package.json) when
// a changed hunk, context included, mentions a test word.
func mentionVerdict(p string, hs []hunk, text bool, what string) (string, bool) {
	if !text {
		return fmt.Sprintf("changes %s, which can hold %s; the diff does not show the change", path.Base(p), what), true
	}
	for _, h := range hs {
		for _, l := range h.lines {
			if w := testWord(l[1:]); w != "" {
				return fmt.Sprintf("changes %s near a line that mentions %s: it can hold %s", path.Base(p), w, what), true
			}
		}
	}
	return "", false
}

// goModVerdict flags a go.mod whose changed lines replace a module (a replace directive, or a
// line of a replace block: only those hold "=>"), so the tests build against a folder or
// module the patch chose (a testify whose assertions always pass), or set a godebug
// default (a godebug line, or a key=value line of a godebug block), which changes how the standard library behaves in the tests, or
// changes its go or toolchain line (the language version and the default GODEBUG settings). A require the
// patch adds is a new dependency, which check/deps lists.
func goModVerdict(hs []hunk, text bool) (string, bool) {
	if !text {
		return "changes go.mod, whose replace and godebug directives the diff does not show (binary or no text change)", true
	}
	for _, h := range hs {
		for _, l := range h.lines {
			if l[0] == ' ' {
				continue
			}
			body := strings.TrimSpace(l[1:])
			word, _, _ := strings.Cut(body, " ")
			switch {
			case word == "replace" || strings.HasPrefix(body, "replace(") || strings.Contains(body, "=>"):
				return "changes a replace directive of go.mod (" + quote(body) + "): the tests build against the module or folder it names instead", true
			case word == "go" || word == "toolchain":
				// The language version decides semantics the tests rely on (a loop variable per
				// iteration from 1.22) and the default GODEBUG settings; the toolchain, which
				// compiler builds them.
				return "changes the " + word + " line of go.mod (" + quote(body) + "): it changes the language version or the toolchain the tests build with", true
			case word == "godebug" || strings.HasPrefix(body, "godebug(") || strings.Contains(body, "=") && !strings.HasPrefix(body, "//"):
				// key=value is only found in a godebug directive or block.
				return "changes a godebug directive of go.mod (" + quote(body) + "): it changes how the standard library behaves in the tests", true
			}
		}
	}
	return "", false
}

// whyGoTestSupport is why a Go file of test-support code is flagged.
const whyGoTestSupport = "is Go test-support code (a helper package such as gittest or testutil, or code that uses package testing): the tests call its helpers, which can decide what counts as a pass"

// goTestSupportDir reports whether the folder of lp (a lower-case path) is named as Go names
// its test-support packages: httptest, iotest, fstest and the like (a name ending in "test",
// but English words such as "latest"), testutil, testhelper(s), testsupport, testkit.
func goTestSupportDir(lp string) bool {
	dir := path.Base(path.Dir(lp))
	switch dir {
	case "testutil", "testutils", "testhelper", "testhelpers", "testsupport", "testkit", "testlib":
		return true
	case "latest", "greatest", "contest", "attest", "protest", "detest", "fastest", "smallest", "largest",
		"biggest", "shortest", "longest", "oldest", "newest", "highest", "lowest", "nearest", "earliest":
		return false
	}
	return len(dir) > len("test") && strings.HasSuffix(dir, "test")
}

// usesPackageTesting reports whether a line of the diff (changed or around a change) imports
// or uses Go's package testing outside a _test.go file: test-support code.
func usesPackageTesting(hs []hunk) bool {
	for _, h := range hs {
		for _, l := range h.lines {
			if strings.Contains(l, `"testing"`) || strings.Contains(l, "testing.T") || strings.Contains(l, "testing.B") ||
				strings.Contains(l, "testing.F") || strings.Contains(l, "testing.M") {
				return true
			}
		}
	}
	return false
}

func definesTestMain(hs []hunk) bool {
	for _, h := range hs {
		for _, l := range h.lines {
			if l[0] == '+' && strings.Contains(l, "func TestMain(") {
				return true
			}
		}
	}
	return false
}
