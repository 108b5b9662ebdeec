package eval

import (
	"sort"
	"strings"

	"github.com/frognano/frognano/runner/verify"
)

// A test id's outcome in a task's test run.
const (
	OutcomePass    = "pass"
	OutcomeFail    = "fail"
	OutcomeSkip    = "skip"
	OutcomeMissing = "missing" // no result under this id: the id is wrong, or the test did not run
)

// Task statuses.
const (
	StatusResolved   = "resolved"
	StatusUnresolved = "unresolved"
	StatusError      = "error" // the task's tests could not be run or its ids were not found
)

// Score is what a task's test run says about its FAIL_TO_PASS and PASS_TO_PASS ids.
type Score struct {
	FailToPass map[string]string `json:"FAIL_TO_PASS"`
	PassToPass map[string]string `json:"PASS_TO_PASS"`
	Missing    []string          `json:"missing,omitempty"`
}

// Resolved reports whether every FAIL_TO_PASS and every PASS_TO_PASS test passes.
func (s Score) Resolved() bool {
	for _, m := range []map[string]string{s.FailToPass, s.PassToPass} {
		for _, o := range m {
			if o != OutcomePass {
				return false
			}
		}
	}
	return true
}

// ScoreTests looks each id up in the per-test results of a run (verify.Read's keys). An id may
// be written as frognano's readers key it or as its tool names it: a pytest node id
// ("tests/test_basic.py::TestMean::test_empty[1]") is keyed "tests.test_basic.TestMean.test_empty[1]",
// a Go "example.com/m/pkg/TestName" is keyed "example.com/m/pkg.TestName". A test below a key
// that failed as a whole (a module that did not import, a package that did not build) failed;
// a test whose results are only its subtests' or parameters' takes the worst of them.
func ScoreTests(tests map[string]verify.Status, failToPass, passToPass []string) Score {
	ix := newIndex(tests)
	s := Score{FailToPass: map[string]string{}, PassToPass: map[string]string{}}
	for _, group := range []struct {
		ids []string
		out map[string]string
	}{{failToPass, s.FailToPass}, {passToPass, s.PassToPass}} {
		for _, id := range group.ids {
			o := ix.outcome(id)
			group.out[id] = o
			if o == OutcomeMissing {
				s.Missing = append(s.Missing, id)
			}
		}
	}
	return s
}

type index struct {
	tests map[string]verify.Status
	keys  []string
}

func newIndex(tests map[string]verify.Status) index {
	keys := make([]string, 0, len(tests))
	for k := range tests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return index{tests, keys}
}

func (ix index) outcome(id string) string {
	for _, k := range candidates(id) {
		if o := ix.lookup(k); o != OutcomeMissing {
			return o
		}
	}
	return OutcomeMissing
}

// candidates are the keys an id may stand for, most literal first.
func candidates(id string) []string {
	out := []string{id}
	// A pytest node id: the parameters in brackets are kept as they are.
	node, param := id, ""
	if i := strings.IndexByte(id, '['); i >= 0 {
		node, param = id[:i], id[i:]
	}
	if strings.Contains(node, "::") || strings.HasSuffix(node, ".py") {
		file, rest, _ := strings.Cut(node, "::")
		file = strings.TrimSuffix(strings.TrimPrefix(file, "./"), ".py")
		k := strings.ReplaceAll(file, "/", ".")
		if rest != "" {
			k += "." + strings.ReplaceAll(rest, "::", ".")
		}
		out = append(out, k+param)
	}
	// A Go id "pkg/path/TestName[/sub]": the slash before the test's name becomes a dot.
	for i := 0; i < len(id); i++ {
		if id[i] == '/' && i+1 < len(id) && isGoTestName(id[i+1:]) {
			out = append(out, id[:i]+"."+id[i+1:])
			break
		}
	}
	return out
}

func isGoTestName(s string) bool {
	for _, p := range []string{"Test", "Example", "Fuzz"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// lookup is k's own result; else a failing ancestor's (k did not run because its module or
// package failed as a whole); else the worst of its descendants (subtests, parameters).
func (ix index) lookup(k string) string {
	if s, ok := ix.tests[k]; ok {
		return string(s)
	}
	for i := len(k) - 1; i > 0; i-- {
		if k[i] == '.' || k[i] == '/' {
			if s, ok := ix.tests[k[:i]]; ok && s == verify.Fail {
				return OutcomeFail
			}
		}
	}
	worst := ""
	for _, sep := range []string{".", "/", "["} {
		prefix := k + sep
		for i := sort.SearchStrings(ix.keys, prefix); i < len(ix.keys) && strings.HasPrefix(ix.keys[i], prefix); i++ {
			switch s := ix.tests[ix.keys[i]]; {
			case s == verify.Fail:
				return OutcomeFail
			case s == verify.Pass:
				worst = OutcomePass
			case worst == "":
				worst = OutcomeSkip
			}
		}
	}
	if worst == "" {
		return OutcomeMissing
	}
	return worst
}
