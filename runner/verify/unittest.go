package verify

import (
	"bytes"
	"strings"
)

// readUnittest reads per-test results from what `python3 -m unittest -v` prints (on standard
// error; the caller passes standard output and standard error together):
//
//	test_pass (tests.test_mod.Group.test_pass) ... ok
//	test_doc (tests.test_mod.Group.test_doc)
//	A docstring's first line ... FAIL
//	  test_sub (tests.test_mod.Group.test_sub) (i=1) ... ERROR
//	test_skip (tests.test_mod.Group.test_skip) ... skipped 'why'
//
// and, once every test has run, a block per failure headed "FAIL: DESC", "ERROR: DESC" or
// "UNEXPECTED SUCCESS: DESC". The status lines give passes and skips; the failure headers are
// the authority on failures, since a test that writes to standard error without a newline
// glues its output to its status ("noiseok") or pushes the status to a later line. A failing
// subtest fails its test (subtests have no result of their own when they pass); an expected
// failure is a skip; an unexpected success is a fail (unittest fails the run for it).
//
// Keys are test ids, "module.Class.method" (Python 3.11 prints the id in the parentheses,
// older versions the class). A module that could not be imported is keyed by its module name
// and a failing setUpClass/setUpModule by its class or module, so that Compare treats them as
// a package that failed as a whole. It returns nil when the output has neither a status line
// nor unittest's "Ran N tests" summary. A test whose status never came, in output without
// that summary (the interpreter died, or the output was cut), is a fail.
func readUnittest(output []byte) map[string]Status {
	tests := map[string]Status{}
	var (
		pending string // the test whose status line is still to come
		summary bool
	)
	rest := output
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		s := strings.TrimRight(string(line), "\r")
		if flavour, desc, ok := strings.Cut(s, ": "); ok && isUnittestFlavour(flavour) {
			if key, _, ok := unittestDesc(desc); ok {
				record(tests, key, Fail)
				continue
			}
		}
		if strings.HasPrefix(s, "Ran ") && strings.Contains(s, " test") {
			summary = true
			continue
		}
		if len(s) >= 70 && (strings.Trim(s, "=") == "" || strings.Trim(s, "-") == "") {
			// The separators around the failure blocks: what follows is a traceback, never a
			// status, until the next description.
			pending = ""
			continue
		}
		head, tail, dots := strings.Cut(s, " ... ")
		if key, sub, ok := unittestDesc(head); ok && (dots || sub == "") {
			// A new description: a test's own line, or a subtest's. With no " ... " it is
			// the first of two lines (the test has a docstring).
			pending = key
			if !dots {
				continue
			}
			s = tail
		} else if pending == "" {
			continue
		} else if dots {
			s = tail // the docstring line, or the test's own output before the status
		}
		if st, ok := unittestStatus(s); ok {
			record(tests, pending, st)
			pending = ""
		}
	}
	if pending != "" && !summary {
		record(tests, pending, Fail)
	}
	if len(tests) == 0 && !summary {
		return nil
	}
	return tests
}

func isUnittestFlavour(s string) bool {
	return s == "FAIL" || s == "ERROR" || s == "UNEXPECTED SUCCESS"
}

// unittestDesc reads a test's description, "NAME (ID)" optionally followed by a subtest's
// parameters, and returns the test's key and the rest.
func unittestDesc(s string) (key, sub string, ok bool) {
	s = strings.TrimLeft(s, " ")
	name, after, ok := strings.Cut(s, " (")
	if !ok {
		return "", "", false
	}
	id, sub, ok := strings.Cut(after, ")")
	if !ok || !isUnittestName(name) || !isUnittestName(id) {
		return "", "", false
	}
	switch {
	case strings.HasPrefix(id, "unittest.loader._FailedTest"):
		// A module that did not import (or whose load_tests failed): NAME is the module.
		key = name
	case name == "setUpClass" || name == "tearDownClass" || name == "setUpModule" || name == "tearDownModule":
		key = id
	case id == name || strings.HasSuffix(id, "."+name):
		key = id // Python 3.11 and later
	default:
		key = id + "." + name
	}
	return key, sub, true
}

// isUnittestName accepts what unittest prints as a test name or id: no space, no parenthesis.
func isUnittestName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t()")
}

// unittestStatus reads the status at the end of s. It matches the end only, because a test's
// own output on standard error may stand before it on the same line.
func unittestStatus(s string) (Status, bool) {
	s = strings.TrimRight(s, " \t")
	if n := len(s); n > 0 && (s[n-1] == '\'' || s[n-1] == '"') {
		// skipped 'reason': the reason is a Python repr, so it ends with a quote.
		if i := strings.LastIndex(s, "skipped "); i >= 0 && i+len("skipped ") < n {
			if q := s[i+len("skipped ")]; q == '\'' || q == '"' {
				return Skip, true
			}
		}
	}
	switch {
	case strings.HasSuffix(s, "unexpected success"):
		return Fail, true
	case strings.HasSuffix(s, "expected failure"):
		return Skip, true
	case strings.HasSuffix(s, "ok"):
		return Pass, true
	case strings.HasSuffix(s, "FAIL"), strings.HasSuffix(s, "ERROR"):
		return Fail, true
	}
	return "", false
}
