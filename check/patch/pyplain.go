package patch

import (
	"fmt"
	"strings"
)

// plainPython reports whether src, the whole text of a Python test module the patch adds,
// only defines tests, and counts its test functions; why says what it does beyond that.
//
// Import time: pytest imports every test module before the first test runs, so whatever a
// module's top level does happens to the whole suite. A plain module's top level holds only
// imports (of pytest, unittest, mock, side-effect-free standard modules, or any module that
// is neither the standard library, a test runner or plugin, nor private: the project's own
// and its libraries, which the suite imports anyway), def and class statements, decorators,
// docstrings, `pass`, assignments of one name, and `if __name__ == "__main__":` (dead under
// a test runner). Everything evaluated at import (decorators, default values, annotations,
// assigned values, class bases) may call only pytest.mark.*, pytest.fixture, pytest.param,
// pytest.approx, pytest.raises, what comes from unittest, mock or those standard modules,
// and a few pure builtins; a class body holds only what the top level may. A fixture with
// autouse=True is allowed: fixtures defined in a test module serve that module's tests only.
// A string condition of skipif or xfail is refused (pytest evaluates it as code, with the
// configuration in reach). A hook function (pytest_*) is refused: it is not one in a test
// module, but a model writing one meant something by it.
//
// Run time: a test's body runs in the same process as every other test, so it could change
// what later tests see. The reader refuses the well-known ways to reach beyond the test:
// exec, eval, open, getattr/setattr, globals, dunder names, frames, the pytest request and
// configuration fixtures, pytest's internals, os, sys, importlib, builtins and the rest of
// the standard library outside the list above, assigning to or mutating an attribute or
// item of an imported module or name (use monkeypatch, which undoes it), unittest.mock
// patchers started by hand, file writes. It cannot see everything a body may do through
// the project's own API (an aliased module-level dict, a global setter): that is why plain
// new test files are still listed by name in the report, to be read with the change.
func plainPython(src string) (why string, tests int) {
	lines, why := pyLex(src)
	if why != "" {
		return why, 0
	}
	s := &pyScope{origin: map[string]string{}, defs: map[string]bool{}}
	for _, l := range lines { // imports first: a body may use a name imported below it
		if why := s.collect(l); why != "" {
			return why, 0
		}
	}
	type frame struct {
		indent int
		kind   byte // 'm' module, 'c' class body, 'f' function body, 'x' dead code
	}
	stack := []frame{{0, 'm'}}
	var pending byte
	for _, l := range lines {
		top := stack[len(stack)-1]
		if pending != 0 {
			if l.indent <= top.indent {
				return fmt.Sprintf("has a block without a body (line %d)", l.line), 0
			}
			stack = append(stack, frame{l.indent, pending})
			pending = 0
		} else {
			for len(stack) > 1 && l.indent < stack[len(stack)-1].indent {
				stack = stack[:len(stack)-1]
			}
			if l.indent != stack[len(stack)-1].indent {
				return fmt.Sprintf("is indented inconsistently (line %d)", l.line), 0
			}
		}
		kind := stack[len(stack)-1].kind
		opens := l.toks[len(l.toks)-1].text == ":"
		if kind == 'x' {
			if opens {
				pending = 'x'
			}
			continue
		}
		if kind == 'm' && isMainGuard(l.toks) {
			pending = 'x'
			continue
		}
		if why := s.words(l); why != "" {
			return why, 0
		}
		if kind == 'f' {
			if why := s.runtime(l); why != "" {
				return why, 0
			}
			if opens {
				pending = 'f'
			}
			continue
		}
		next, isTest, why := s.importTime(l, kind)
		if why != "" {
			return why, 0
		}
		if isTest {
			tests++
		}
		if opens {
			if next == 0 {
				return fmt.Sprintf("runs code at import (line %d)", l.line), 0
			}
			pending = next
		}
	}
	return "", tests
}

// pyScope is what the module binds: imported names with the module path each stands for,
// and the names its top level defines.
type pyScope struct {
	origin   map[string]string
	defs     map[string]bool
	usesMock bool
}

func isMainGuard(t []pyTok) bool {
	return len(t) == 5 && t[0].text == "if" && t[1].text == "__name__" && t[2].text == "==" &&
		(t[3].text == `"__main__"` || t[3].text == `'__main__'`) && t[4].text == ":"
}

// collect records the names a line imports or, at the top level, defines, and refuses an
// import of a module that can change the interpreter or the test run.
func (s *pyScope) collect(l pyLine) string {
	t := l.toks
	if l.indent == 0 && len(t) >= 2 && t[0].kind == 'n' {
		switch {
		case t[0].text == "def" || t[0].text == "class":
			s.defs[t[1].text] = true
		case t[0].text == "async" && len(t) > 2:
			s.defs[t[2].text] = true
		case t[1].text == "=" || t[1].text == ":":
			s.defs[t[0].text] = true
		}
	}
	switch {
	case t[0].text == "import":
		for _, part := range splitTop(t[1:], ",") {
			mod, as := dotted(part)
			if mod == "" || (as == "" && len(part) != 2*strings.Count(mod, ".")+1) {
				return fmt.Sprintf("has an import it cannot read (line %d)", l.line)
			}
			if why := pyModuleWhy(mod); why != "" {
				return fmt.Sprintf("%s (line %d)", why, l.line)
			}
			if as != "" {
				s.bind(as, mod)
			} else {
				root, _, _ := strings.Cut(mod, ".")
				s.bind(root, root)
			}
		}
	case t[0].text == "from":
		i := 1
		for i < len(t) && (t[i].text == "." || t[i].text == "...") {
			i++
		}
		relative := i > 1
		j := i
		for j < len(t) && t[j].text != "import" {
			j++
		}
		mod := joinToks(t[i:j])
		if j >= len(t)-1 || (!relative && mod == "") {
			return fmt.Sprintf("has an import it cannot read (line %d)", l.line)
		}
		if !relative {
			if why := pyModuleWhy(mod); why != "" {
				return fmt.Sprintf("%s (line %d)", why, l.line)
			}
		}
		names := t[j+1:]
		if names[0].text == "(" && names[len(names)-1].text == ")" {
			names = names[1 : len(names)-1]
		}
		for _, part := range splitTop(names, ",") {
			if len(part) == 0 {
				continue // a trailing comma
			}
			if part[0].text == "*" {
				return fmt.Sprintf("imports every name of a module (line %d)", l.line)
			}
			name, as := dotted(part)
			if name == "" || strings.Contains(name, ".") {
				return fmt.Sprintf("has an import it cannot read (line %d)", l.line)
			}
			full := mod + "." + name
			if relative {
				full = "." + full
			}
			if why := pyModuleWhy(full); why != "" && !relative {
				return fmt.Sprintf("%s (line %d)", why, l.line)
			}
			if as == "" {
				as = name
			}
			s.bind(as, full)
		}
	}
	return ""
}

func (s *pyScope) bind(name, mod string) {
	s.origin[name] = mod
	if mod == "mock" || strings.HasPrefix(mod, "mock.") || strings.HasPrefix(mod, "unittest.mock") || mod == "unittest" {
		s.usesMock = true
	}
}

// dotted reads "a.b.c" or "a.b as x" from tokens.
func dotted(t []pyTok) (name, as string) {
	if n := len(t); n >= 3 && t[n-2].text == "as" && t[n-1].kind == 'n' {
		as, t = t[n-1].text, t[:n-2]
	}
	for i, k := range t {
		if (i%2 == 0 && k.kind != 'n') || (i%2 == 1 && k.text != ".") || len(t)%2 == 0 {
			return "", ""
		}
	}
	return joinToks(t), as
}

func joinToks(t []pyTok) string {
	var b strings.Builder
	for _, k := range t {
		b.WriteString(k.text)
	}
	return b.String()
}

// splitTop splits tokens at sep outside brackets.
func splitTop(t []pyTok, sep string) [][]pyTok {
	var out [][]pyTok
	depth, start := 0, 0
	for i, k := range t {
		switch k.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, t[start:i])
				start = i + 1
			}
		}
	}
	return append(out, t[start:])
}

// pySafeStdlib are standard modules whose use in a test cannot outlive it through the
// rules above (decimal's context and abc's registry are refused by name).
var pySafeStdlib = map[string]bool{
	"__future__": true, "abc": true, "array": true, "base64": true, "binascii": true, "bisect": true,
	"cmath": true, "collections": true, "contextlib": true, "copy": true, "dataclasses": true, "datetime": true,
	"decimal": true, "difflib": true, "enum": true, "fractions": true, "functools": true, "hashlib": true,
	"heapq": true, "hmac": true, "html": true, "io": true, "itertools": true, "json": true, "keyword": true,
	"math": true, "numbers": true, "operator": true, "pprint": true, "re": true, "statistics": true,
	"string": true, "struct": true, "textwrap": true, "typing": true, "unicodedata": true, "uuid": true,
	"zoneinfo": true, "unittest": true, "pytest": true, "mock": true,
}

// pyModuleWhy says why importing mod (or a name from it) keeps the warning, or "".
func pyModuleWhy(mod string) string {
	root, rest, _ := strings.Cut(mod, ".")
	switch {
	case strings.HasPrefix(root, "_") || strings.Contains(rest, "._") || strings.HasPrefix(rest, "_"):
		return "imports the private module or name " + quote(mod)
	case root == "pytest":
		if rest != "" && !pytestAttrs[rest] {
			return "imports " + quote(mod) + ", beyond pytest's plain test helpers"
		}
	case root == "unittest":
		if first, _, _ := strings.Cut(rest, "."); rest != "" && !unittestAttrs[first] {
			return "imports " + quote(mod) + ", beyond unittest's test classes, skips and mock"
		}
	case pySafeStdlib[root]:
	case shadowable[root] || root == "conftest" || strings.HasPrefix(root, "pytest_"):
		return "imports " + quote(root) + ", which can change the interpreter or the test run for every test"
	}
	return ""
}

var pytestAttrs = map[string]bool{
	"mark": true, "fixture": true, "param": true, "raises": true, "approx": true, "skip": true, "fail": true,
	"xfail": true, "warns": true, "deprecated_call": true,
}

var unittestAttrs = map[string]bool{
	"TestCase": true, "IsolatedAsyncioTestCase": true, "mock": true, "skip": true, "skipIf": true,
	"skipUnless": true, "expectedFailure": true, "SkipTest": true,
}
