package patch

import (
	"path"
	"regexp"
	"strings"
)

// NewTest is a test file the patch adds that only defines tests: nothing in it can change
// what the other tests report (see Trust). The report lists it, without the warning.
type NewTest struct {
	Path string
	// Tests is the number of test functions it defines (Python def test*, Go Test* and
	// Fuzz*; a parametrized one counts once).
	Tests int
}

// Trust splits the files of a whole patch that touch the tests: the influences, which can
// change what the tests report without any change to the code under test (AffectsTests, and
// any file testCommand names: commandRuns), and the new test files that only add tests.
//
// A new test file is listed as a new test, not an influence, only when all of this holds;
// anything else keeps the warning, which is what doubt must do, since the diff is the
// model's:
//   - it is added (not copied, renamed or a symlink), as text, and AffectsTests flags it
//     only as a test file (not as conftest.py, TestMain, a shadowing module, ...);
//   - it is a Python module named test_*.py or *_test.py, or a Go file named *_test.go
//     (JavaScript and the rest keep the warning: their runners load set-up files and
//     transform modules in ways the name does not show);
//   - no folder on its path, and not its name, says it is shared: testdata, fixtures,
//     helpers, utils, support, plugins, mocks, data, golden, snapshots, conftest, setup;
//   - no other file of the patch names its module (a Python test module another file
//     imports is a helper; an existing test cannot import a new file unless the patch
//     changes it, and then that change is flagged itself);
//   - its whole text passes the language's reader (plainPython, plainGo): it runs nothing
//     at import or start-up beyond defining tests, and its tests do not reach beyond
//     themselves by the well-known ways.
func Trust(files []File, testCommand string) (influences []TestInfluence, tests []NewTest) {
	for _, f := range files {
		why, ok := f.AffectsTests()
		if !ok {
			for _, name := range names(f) {
				if why = commandRuns(name, testCommand); why != "" {
					influences = append(influences, TestInfluence{Path: f.Path(), Why: why})
					break
				}
			}
			continue
		}
		if n, plain := plainNewTest(f, files); plain {
			tests = append(tests, NewTest{Path: f.Path(), Tests: n})
			continue
		} else if reason := newTestWhy(f, files); reason != "" {
			why += " (" + reason + ")"
		}
		influences = append(influences, TestInfluence{Path: f.Path(), Why: why})
	}
	return influences, tests
}

// sharedNames are path components and name parts of files that other tests use.
var sharedNames = regexp.MustCompile(`(?i)(^|[_./-])(testdata|test_data|fixtures?|helpers?|utils?|util|support|plugins?|mocks?|stubs?|data|golden|snapshots?|__snapshots__|conftest|setup|common|shared|vendor|node_modules)([_./-]|$)`)

// plainCandidate returns the language of a new file whose path allows it to be a plain new
// test ("py" or "go"), or "".
func plainCandidate(f File) string {
	if f.Status != StatusAdded || f.Binary || f.IsSymlink || (f.NewMode != ModeFile && f.NewMode != ModeExecutable) {
		return ""
	}
	p := f.NewPath
	if sharedNames.MatchString(p) {
		return ""
	}
	if why, ok := AffectsTests(p, f.raw); !ok || why != whyTestFile {
		return ""
	}
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, ".py"):
		stem := strings.TrimSuffix(base, ".py")
		if (strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test")) && !shadowable[stem] && isPyIdent(stem) {
			return "py"
		}
	case strings.HasSuffix(base, "_test.go"):
		return "go"
	}
	return ""
}

func isPyIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return s != "" && isIdentStart(s[0])
}

// plainNewTest reports whether f is a new test file that only adds tests (see Trust), and
// how many test functions it defines.
func plainNewTest(f File, files []File) (tests int, ok bool) {
	lang := plainCandidate(f)
	if lang == "" || namedElsewhere(f, files) {
		return 0, false
	}
	src, ok := addedText(f)
	if !ok {
		return 0, false
	}
	var why string
	if lang == "py" {
		why, tests = plainPython(src)
	} else {
		why, tests = plainGo(src)
	}
	return tests, why == ""
}

// newTestWhy says why a new Python or Go test file keeps the warning, or "" when it is not
// one the readers judge.
func newTestWhy(f File, files []File) string {
	lang := plainCandidate(f)
	if lang == "" {
		return ""
	}
	if namedElsewhere(f, files) {
		return "another file of the patch names it, so it may be imported as a helper"
	}
	src, ok := addedText(f)
	if !ok {
		return "its text could not be read from the diff"
	}
	var why string
	if lang == "py" {
		why, _ = plainPython(src)
	} else {
		why, _ = plainGo(src)
	}
	return "it " + why
}

// namedElsewhere reports whether another file of the patch has an added line that names
// f's module (its file name without the extension, as a word).
func namedElsewhere(f File, files []File) bool {
	stem := strings.TrimSuffix(strings.TrimSuffix(path.Base(f.NewPath), ".py"), "_test.go")
	if strings.HasSuffix(f.NewPath, ".go") {
		return false // Go test files are not imported; the package's other files are judged themselves
	}
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(stem) + `($|[^A-Za-z0-9_])`)
	for _, g := range files {
		if g.Path() == f.Path() && g.OldPath == f.OldPath {
			continue
		}
		hs, _ := hunks(g.raw)
		for _, h := range hs {
			for _, l := range h.lines {
				if l[0] == '+' && word.MatchString(l) {
					return true
				}
			}
		}
	}
	return false
}

// addedText returns the whole text of an added file from its diff: every line of its one
// hunk must be an addition.
func addedText(f File) (string, bool) {
	hs, text := hunks(f.raw)
	if !text || len(hs) != 1 {
		return "", false
	}
	var b strings.Builder
	for _, l := range hs[0].lines {
		if l[0] != '+' {
			return "", false
		}
		b.WriteString(l[1:])
		b.WriteByte('\n')
	}
	return b.String(), true
}
