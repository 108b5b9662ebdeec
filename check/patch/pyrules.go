package patch

import (
	"fmt"
	"strings"
)

// pyDenyNames are names whose use anywhere in a new test module keeps the warning: they
// run text as code, reach the module's or the interpreter's namespaces, write files, stop
// the process, or hand a test pytest's request, configuration or session.
var pyDenyNames = map[string]bool{
	"exec": true, "eval": true, "compile": true, "open": true, "setattr": true, "delattr": true,
	"getattr": true, "globals": true, "locals": true, "vars": true, "breakpoint": true, "input": true,
	"exit": true, "quit": true, "help": true, "global": true, "nonlocal": true,
	"request": true, "pytestconfig": true, "pytester": true, "testdir": true, "cache": true,
	"record_property": true, "record_xml_attribute": true, "record_testsuite_property": true,
	"doctest_namespace": true, "pytest_plugins": true, "collect_ignore": true, "collect_ignore_glob": true,
	"getcontext": true, "setcontext": true,
}

// pyDenyAttrs are attribute names that reach the same: frames and their globals, the
// environment, pytest's configuration and hooks, files, global registries.
var pyDenyAttrs = map[string]bool{
	"eval": true, "exec": true, "open": true, "frame": true, "f_globals": true, "f_locals": true,
	"f_back": true, "f_builtins": true, "tb_frame": true, "tb_next": true, "gi_frame": true, "cr_frame": true,
	"ag_frame": true, "environ": true, "putenv": true, "unsetenv": true, "chdir": true, "system": true,
	"config": true, "session": true, "pluginmanager": true, "hook": true, "ihook": true,
	"write_text": true, "write_bytes": true, "unlink": true, "rename": true, "rmdir": true, "touch": true,
	"chmod": true, "symlink_to": true, "hardlink_to": true, "register": true, "getcontext": true,
	"setcontext": true, "modules": true, "meta_path": true, "settrace": true, "setprofile": true,
}

// pyMutators are the methods that change a list, dict or set in place.
var pyMutators = map[string]bool{
	"update": true, "setdefault": true, "pop": true, "popitem": true, "clear": true, "append": true,
	"extend": true, "insert": true, "remove": true, "add": true, "discard": true, "sort": true, "reverse": true,
}

// pySafeBuiltins may be called at import time: they build values and do nothing else.
var pySafeBuiltins = map[string]bool{
	"range": true, "dict": true, "list": true, "tuple": true, "set": true, "frozenset": true, "int": true,
	"float": true, "str": true, "bytes": true, "bool": true, "complex": true, "len": true, "min": true,
	"max": true, "sum": true, "abs": true, "round": true, "sorted": true, "reversed": true, "zip": true,
	"enumerate": true, "repr": true, "chr": true, "ord": true, "divmod": true, "staticmethod": true,
	"classmethod": true, "property": true,
}

// words refuses the names and attributes above, and any attribute of pytest or unittest
// beyond their plain test helpers.
func (s *pyScope) words(l pyLine) string {
	for i, k := range l.toks {
		if k.kind != 'n' {
			continue
		}
		attr := i > 0 && l.toks[i-1].text == "."
		if why := s.word(k.text, attr); why != "" {
			return fmt.Sprintf("%s (line %d)", why, l.line)
		}
		if attr && i >= 2 && (i < 3 || l.toks[i-3].text != ".") {
			switch s.origin[l.toks[i-2].text] {
			case "pytest":
				if !pytestAttrs[k.text] {
					return fmt.Sprintf("uses pytest.%s, beyond pytest's plain test helpers (line %d)", k.text, l.line)
				}
			case "unittest":
				if !unittestAttrs[k.text] {
					return fmt.Sprintf("uses unittest.%s, beyond unittest's test classes, skips and mock (line %d)", k.text, l.line)
				}
			}
		}
	}
	for _, n := range l.fnames { // an f-string's names may be either
		for _, attr := range []bool{false, true} {
			if why := s.word(n, attr); why != "" {
				return fmt.Sprintf("%s in an f-string (line %d)", why, l.line)
			}
		}
	}
	return ""
}

func (s *pyScope) word(n string, attr bool) string {
	switch {
	case strings.HasPrefix(n, "__"):
		return "uses the dunder name " + quote(n)
	case !attr && strings.HasPrefix(n, "pytest_"):
		return "defines or uses the pytest hook name " + quote(n)
	case !attr && pyDenyNames[n]:
		return "uses " + quote(n)
	case attr && pyDenyAttrs[n]:
		return "uses the attribute " + quote(n)
	case attr && (n == "start" || n == "enter_context") && s.usesMock:
		return "enters something by hand (." + n + "), as a mock patcher that outlives the test"
	}
	return ""
}

// isModuleName reports whether n is bound at the top level (imported or defined there):
// a change to it outlives the test.
func (s *pyScope) isModuleName(n string) bool {
	_, imported := s.origin[n]
	return imported || s.defs[n]
}

// runtime refuses, in a body, an assignment to (or deletion of) an attribute or item of a
// module-level name, and an in-place change of an imported value.
func (s *pyScope) runtime(l pyLine) string {
	t := l.toks
	for i, k := range t {
		if k.text == "lambda" {
			t = t[:i]
			break
		}
	}
	var targets [][]pyTok
	if t[0].text == "del" {
		targets = splitTop(t[1:], ",")
	} else {
		start, depth := 0, 0
		for i, k := range t {
			switch {
			case k.text == "(" || k.text == "[" || k.text == "{":
				depth++
			case k.text == ")" || k.text == "]" || k.text == "}":
				depth--
			case depth == 0 && k.kind == 'o' && (k.text == "=" || (strings.HasSuffix(k.text, "=") && !isComparison(k.text))):
				targets = append(targets, splitTop(t[start:i], ",")...)
				start = i + 1
			}
		}
	}
	for _, tg := range targets {
		if len(tg) > 1 && tg[0].kind == 'n' && (tg[1].text == "." || tg[1].text == "[") && s.isModuleName(tg[0].text) {
			return fmt.Sprintf("changes %s, which outlives the test (line %d)", quote(tg[0].text+tg[1].text+"…"), l.line)
		}
	}
	for i := 2; i+1 < len(l.toks); i++ {
		if l.toks[i-1].text == "." && pyMutators[l.toks[i].text] && l.toks[i+1].text == "(" {
			j := i - 1 // the dot before the method
			for j >= 3 && l.toks[j-1].kind == 'n' && l.toks[j-2].text == "." {
				j -= 2
			}
			if root := l.toks[j-1]; root.kind == 'n' {
				if _, imported := s.origin[root.text]; imported {
					return fmt.Sprintf("changes %s in place, which outlives the test (line %d)", quote(root.text), l.line)
				}
			}
		}
	}
	return ""
}

func isComparison(op string) bool { return op == "==" || op == "!=" || op == "<=" || op == ">=" }

// importTime judges a line of the module or of a class body, which runs at import. It
// returns the kind of block the line opens ('f' a function, 'c' a class, 0 none allowed)
// and whether it defines a test function.
func (s *pyScope) importTime(l pyLine, kind byte) (next byte, isTest bool, why string) {
	t := l.toks
	at := func(format string, a ...any) (byte, bool, string) {
		return 0, false, fmt.Sprintf(format, a...) + fmt.Sprintf(" (line %d)", l.line)
	}
	switch first := t[0].text; {
	case first == "import" || first == "from":
		if kind != 'm' {
			return at("imports in a class body")
		}
		return 0, false, ""
	case first == "@":
		if why := s.callsAllowed(t[1:], true); why != "" {
			return at("%s", why)
		}
		return 0, false, ""
	case first == "def" || (first == "async" && len(t) > 1 && t[1].text == "def"):
		if first == "async" {
			t = t[1:]
		}
		if len(t) < 4 || t[1].kind != 'n' || t[2].text != "(" {
			return at("has a def it cannot read")
		}
		// The header ends at the first colon outside brackets; defaults and annotations
		// in it are evaluated at import, the rest of the line is the body.
		depth, end := 0, -1
		for i, k := range t[2:] {
			switch k.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ":":
				if depth == 0 && end < 0 {
					end = i + 2
				}
			}
		}
		if end < 0 {
			return at("has a def it cannot read")
		}
		if why := s.callsAllowed(t[2:end], false); why != "" {
			return at("%s", why)
		}
		if end+1 < len(t) { // a one-line body runs with the test
			if why := s.runtime(pyLine{line: l.line, toks: t[end+1:]}); why != "" {
				return 0, false, why
			}
		}
		return 'f', strings.HasPrefix(t[1].text, "test"), ""
	case first == "class":
		if kind != 'm' {
			return at("defines a class in a class body")
		}
		if len(t) < 3 || t[1].kind != 'n' || t[len(t)-1].text != ":" {
			return at("has a class statement it cannot read")
		}
		for _, k := range t[2 : len(t)-1] {
			if k.kind != 'n' && k.text != "." && k.text != "," && k.text != "(" && k.text != ")" {
				return at("has class bases that are not plain names")
			}
		}
		return 'c', false, ""
	case first == "pass" && len(t) == 1, first == "..." && len(t) == 1:
		return 0, false, ""
	}
	allStrings := true
	for _, k := range t {
		allStrings = allStrings && k.kind == 's'
	}
	if allStrings { // a docstring
		return 0, false, ""
	}
	// NAME = value, NAME: annotation [= value]
	if len(t) >= 2 && t[0].kind == 'n' && (t[1].text == "=" || t[1].text == ":") {
		rest := t[2:]
		for _, k := range rest {
			if k.kind == 'o' && k.text == "=" && t[1].text == "=" {
				return at("assigns more than one name at import")
			}
		}
		if why := s.callsAllowed(rest, false); why != "" {
			return at("%s", why)
		}
		return 0, false, ""
	}
	return at("runs code at import")
}

// callsAllowed refuses, in an expression evaluated at import, a call of anything but the
// test helpers, side-effect-free standard modules and pure builtins; head says the
// expression is a decorator, whose application is itself a call.
func (s *pyScope) callsAllowed(t []pyTok, head bool) string {
	if head {
		n := 0
		for n < len(t) && (t[n].kind == 'n' || t[n].text == ".") {
			n++
		}
		if n == 0 || (n < len(t) && t[n].text != "(") {
			return "has a decorator that is not a plain name"
		}
		if why := s.callee(joinToks(t[:n])); why != "" {
			return why
		}
	}
	for i, k := range t {
		if k.text != "(" || i == 0 {
			continue
		}
		prev := t[i-1]
		if prev.kind != 'n' || pyKeywords[prev.text] {
			if prev.kind == 'o' && (prev.text == ")" || prev.text == "]") || prev.kind == 's' {
				return "calls the result of an expression at import"
			}
			continue
		}
		j := i - 1
		for j >= 2 && t[j-1].text == "." && t[j-2].kind == 'n' {
			j -= 2
		}
		if j >= 1 && (t[j-1].text == "." || t[j-1].text == ")" || t[j-1].text == "]") {
			return "calls a method of an expression at import"
		}
		name := joinToks(t[j:i])
		if why := s.callee(name); why != "" {
			return why
		}
		if (strings.HasSuffix(name, "skipif") || strings.HasSuffix(name, "xfail")) && i+1 < len(t) && t[i+1].kind == 's' {
			return "gives " + name + " a string condition, which pytest evaluates as code"
		}
	}
	for i := 0; i+2 < len(t); i++ {
		if t[i].text == "condition" && t[i+1].text == "=" && t[i+2].kind == 's' {
			return "gives a marker a string condition, which pytest evaluates as code"
		}
	}
	return ""
}

// callee says why calling name at import keeps the warning, or "".
func (s *pyScope) callee(name string) string {
	root, rest, _ := strings.Cut(name, ".")
	full := name
	if o, ok := s.origin[root]; ok {
		full = o
		if rest != "" {
			full += "." + rest
		}
	} else if s.defs[root] {
		return "calls " + quote(name) + ", defined in the module, at import"
	} else if rest == "" && pySafeBuiltins[name] {
		return ""
	}
	froot, frest, _ := strings.Cut(full, ".")
	switch {
	case froot == "pytest":
		if strings.HasPrefix(frest, "mark.") || frest == "fixture" || frest == "param" || frest == "approx" || frest == "raises" {
			return ""
		}
	case froot == "unittest" || froot == "mock" || (pySafeStdlib[froot] && froot != "pytest"):
		if _, ok := s.origin[root]; ok {
			return ""
		}
	}
	return "calls " + quote(name) + " at import"
}

// pyKeywords are the keywords that can stand before a parenthesis without calling.
var pyKeywords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true, "for": true,
	"lambda": true, "return": true, "yield": true, "await": true, "assert": true, "elif": true, "while": true,
	"with": true, "as": true, "from": true, "import": true, "del": true, "raise": true, "except": true,
	"case": true, "match": true, "None": true, "True": true, "False": true,
}
