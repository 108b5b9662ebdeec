package patch

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// plainGo reports whether src, the whole text of a _test.go file the patch adds, only
// defines tests, and counts its Test and Fuzz functions; why says what it does beyond that.
//
// Start-up: the test binary runs every package-level initializer and init function, and
// TestMain in place of its main, before any test. A plain file has no init, no TestMain, no
// package-level var whose value calls anything, no //go: directive but build and embed
// (go:linkname reaches any symbol), and imports neither unsafe, cgo, reflect, runtime,
// syscall, os/exec, os/signal, flag, plugin nor golang.org/x/sys, nor any package for its
// side effects alone (a blank or dot import).
//
// Run time: tests of a package share one process and its package-level state. A plain
// file does not call what changes the process for every test (os.Setenv, os.Chdir, os.Exit,
// file writes, http.DefaultTransport, log.SetOutput, slog.SetDefault, ...), assigns to no
// other package's variable, and assigns to no name it does not declare in scope (which
// would be the package state the other test files share); a variable declared in a case
// clause is refused rather than scoped. As for Python, what a body does through the
// package's own API is not judged here: the file is listed by name in the report.
func plainGo(src string) (why string, tests int) {
	toks, why := goLex(src)
	if why != "" {
		return why, 0
	}
	imports := map[string]string{} // name in the file → import path
	types := goFileTypes(toks)
	scopes := []map[string]bool{{}}
	depth, paren := 0, 0
	header := false           // the statement opens a block whose scope its declarations belong to
	stmt := 0                 // index of the current statement's first token
	topSkip := 0              // the top level's tokens before it belong to a declaration already judged
	sig, sigParen := false, 0 // in a function's signature, and its parentheses' depth
	for i := 0; i < len(toks); i++ {
		k := toks[i]
		switch k.text {
		case "{":
			sig = false
			depth++
			if len(scopes) <= depth {
				scopes = append(scopes, map[string]bool{})
			}
			header, stmt = false, i+1
			continue
		case "}":
			scopes[depth] = map[string]bool{}
			if depth--; depth < 0 {
				return "closes a brace it did not open", 0
			}
			stmt = i + 1
			continue
		case "(", "[":
			paren++
		case ")", "]":
			paren--
		case ";", "\n":
			if paren == 0 {
				stmt = i + 1
				if k.text == "\n" {
					header = false
				}
				if sigParen <= 0 {
					sig = false // a func type, not a signature followed by a body
				}
			}
			continue
		}
		if i == stmt {
			switch k.text {
			case "if", "for", "switch", "select", "else":
				header = true
			}
		}
		declare := func(name string) {
			d := depth
			if header {
				d++
				if len(scopes) <= d {
					scopes = append(scopes, map[string]bool{})
				}
			}
			scopes[d][name] = true
		}
		if depth == 0 && paren == 0 && i >= topSkip {
			end, why := goTopLevel(toks, i, imports, types, declare)
			if why != "" {
				return why, 0
			}
			topSkip = end
			if k.text == "func" && i+2 < len(toks) && toks[i+2].text == "(" &&
				(strings.HasPrefix(toks[i+1].text, "Test") || strings.HasPrefix(toks[i+1].text, "Fuzz")) {
				tests++
			}
		}
		// Parameters and results belong to the body that follows them.
		switch {
		case k.text == "func":
			sig, sigParen = true, 0
		case sig && k.text == "(":
			sigParen++
		case sig && k.text == ")":
			sigParen--
		case sig && k.kind == 'n' && sigParen > 0:
			h := header
			header = true
			declare(k.text)
			header = h
		}
		if k.kind == 'n' && i+2 < len(toks) && toks[i+1].text == "." && toks[i+2].kind == 'n' {
			if p, ok := imports[k.text]; ok && goDenied[p+"."+toks[i+2].text] {
				return fmt.Sprintf("calls or uses %s.%s, which changes the process for every test", p, toks[i+2].text), 0
			}
		}
		if k.text == "var" && depth > 0 {
			for j := i + 1; j < len(toks) && toks[j].kind == 'n'; j += 2 {
				declare(toks[j].text)
				if j+1 >= len(toks) || toks[j+1].text != "," {
					break
				}
			}
		}
		if depth == 0 {
			continue
		}
		switch k.text {
		case ":=":
			if toks[stmt].text == "case" {
				return "declares a variable in a case clause", 0
			}
			for j := i - 1; j >= stmt; j-- {
				if toks[j].kind == 'n' && toks[j].text != "range" {
					declare(toks[j].text)
				}
			}
		case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "&^=", "++", "--":
			in := depth + 1
			if header && in < len(scopes) {
				in++
			}
			if why := goAssign(toks[stmt:i], imports, scopes[:in]); why != "" {
				return why, 0
			}
		}
	}
	if depth != 0 || paren != 0 {
		return "leaves a bracket open", 0
	}
	return "", tests
}

// goTopLevel judges a token at the top level of the file, and returns the index past the
// declaration it judged whole (a var or import), or i.
//
// A method is plain only on a type the file declares (a fake): a method on a type of the
// package under test (an internal test file shares its package) becomes part of that type in
// every test of the package, and can change what the code under test does (a MarshalJSON,
// String or Error it did not have: json.Marshal, fmt and errors call it).
func goTopLevel(toks []pyTok, i int, imports map[string]string, types map[string]bool, declare func(string)) (int, string) {
	k := toks[i]
	next := func(n int) string {
		if i+n < len(toks) {
			return toks[i+n].text
		}
		return ""
	}
	switch k.text {
	case "func":
		if n := next(1); n == "init" || n == "TestMain" {
			return i, "defines " + n + ", which runs before the tests"
		}
		if next(1) == "(" {
			if recv := goReceiverType(toks, i+1); !types[recv] {
				return i, "declares a method on " + quote(recv) + ", a type it does not declare: the package's own type gains it in every test, which can change what the code under test does"
			}
		}
		if i+1 < len(toks) && toks[i+1].kind == 'n' {
			declare(next(1))
		}
	case "const", "type":
		if i+1 < len(toks) && toks[i+1].kind == 'n' {
			declare(next(1))
		}
	case "var", "import":
		end := goDeclEnd(toks, i)
		for j := i + 1; j < end; j++ {
			t := toks[j]
			if k.text == "var" {
				if t.text == "(" && j > i+1 && (toks[j-1].kind == 'n' || strings.Contains(")]}", toks[j-1].text)) {
					return i, "has a package-level variable whose value calls something at start-up"
				}
				if t.kind == 'n' && (toks[j-1].text == "var" || toks[j-1].text == "\n" || toks[j-1].text == "(" || toks[j-1].text == ",") {
					declare(t.text)
				}
				continue
			}
			if t.kind != 's' {
				continue
			}
			p := strings.Trim(t.text, "`\"")
			name := p[strings.LastIndex(p, "/")+1:]
			switch prev := toks[j-1]; {
			case prev.text == "_" || prev.text == ".":
				return i, "imports " + quote(p) + " for its side effects or into the file's scope"
			case prev.kind == 'n' && prev.text != "import":
				name = prev.text
			}
			for _, d := range goDeniedImports {
				if p == d || strings.HasPrefix(p, d+"/") {
					return i, "imports " + quote(p) + ", which reaches beyond the tests"
				}
			}
			imports[name] = p
			declare(name)
		}
		return end, ""
	}
	return i, ""
}

// goReceiverType returns the type name of the method receiver whose '(' is toks[open]: the last
// name outside brackets ("T" of "(s *T[K])"), or "" when there is none.
func goReceiverType(toks []pyTok, open int) string {
	name, depth := "", 0
	for j := open + 1; j < len(toks); j++ {
		switch t := toks[j]; {
		case t.text == "(" || t.text == "[":
			depth++
		case t.text == "]":
			depth--
		case t.text == ")":
			if depth == 0 {
				return name
			}
			depth--
		case t.kind == 'n' && depth == 0:
			name = t.text
		}
	}
	return ""
}

// goFileTypes returns the names of the types the file declares at its top level, alone
// ("type T ...") or in a group ("type ( A ...; B ... )").
func goFileTypes(toks []pyTok) map[string]bool {
	types := map[string]bool{}
	depth := 0
	for i := 0; i < len(toks); i++ {
		switch toks[i].text {
		case "{", "(", "[":
			depth++
			continue
		case "}", ")", "]":
			depth--
			continue
		}
		if depth != 0 || toks[i].text != "type" || i+1 >= len(toks) {
			continue
		}
		if toks[i+1].kind == 'n' {
			types[toks[i+1].text] = true
			continue
		}
		if toks[i+1].text != "(" {
			continue
		}
		end := goDeclEnd(toks, i)
		inner := 0
		for j := i + 2; j < end; j++ {
			switch t := toks[j]; {
			case t.text == "(" || t.text == "{" || t.text == "[":
				inner++
			case t.text == ")" || t.text == "}" || t.text == "]":
				inner--
			case inner == 0 && t.kind == 'n' && (j == i+2 || toks[j-1].text == "\n" || toks[j-1].text == ";"):
				types[t.text] = true
			}
		}
		i = end - 1
	}
	return types
}

// goDeclEnd returns the index just past the declaration starting at toks[i]: its group's
// closing parenthesis, or the newline where Go would end the statement.
func goDeclEnd(toks []pyTok, i int) int {
	depth := 0
	for j := i + 1; j < len(toks); j++ {
		switch t := toks[j].text; t {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth--; depth == 0 && toks[i+1].text == "(" {
				return j + 1
			}
		case "\n":
			if depth == 0 && toks[i+1].text != "(" {
				if p := toks[j-1]; p.kind != 'o' || strings.Contains(")]}", p.text) || p.text == "++" || p.text == "--" {
					return j
				}
			}
		}
	}
	return len(toks)
}

// goAssign refuses an assignment to another package's variable or to a name not declared
// in scope (one of the package's, which every test shares).
func goAssign(lhs []pyTok, imports map[string]string, scopes []map[string]bool) string {
	for _, part := range splitTop(lhs, ",") {
		if len(part) > 0 && (part[0].text == "*" || part[0].text == "(") {
			return "assigns through a pointer or a parenthesized expression"
		}
		if len(part) == 0 || part[0].kind != 'n' || part[0].text == "_" {
			continue
		}
		n := part[0].text
		if _, ok := imports[n]; ok {
			return "assigns to " + quote(n+"."+joinToks(part[1:])) + ", another package's state"
		}
		declared := false
		for _, s := range scopes {
			declared = declared || s[n]
		}
		if !declared {
			return "assigns to " + quote(n) + ", which it does not declare: package state the other tests share"
		}
	}
	return ""
}

var goDeniedImports = []string{"unsafe", "C", "reflect", "runtime", "syscall", "os/exec", "os/signal", "flag",
	"plugin", "golang.org/x/sys", "testing/internal", "internal"}

// goDenied are package members that change the process for every test.
var goDenied = map[string]bool{}

func init() {
	for pkg, names := range map[string]string{
		"os":        "Setenv Unsetenv Clearenv Chdir Exit Args WriteFile Create Remove RemoveAll Rename Symlink Link Chmod Chown Lchown Chtimes Truncate Mkdir MkdirAll OpenFile Stdout Stderr Stdin",
		"io/ioutil": "WriteFile",
		"net/http":  "DefaultClient DefaultTransport DefaultServeMux Handle HandleFunc",
		"log":       "SetOutput SetFlags SetPrefix Default",
		"log/slog":  "SetDefault SetLogLoggerLevel",
		"time":      "Local",
		"math/rand": "Seed",
		"testing":   "Init Main MainStart RunTests RunBenchmarks RunExamples",
		"io/fs":     "WriteFile",
	} {
		for _, n := range strings.Fields(names) {
			goDenied[pkg+"."+n] = true
		}
	}
}

// goLex splits Go source into names ('n'), strings and runes ('s'), numbers ('d'),
// operators ('o') and newlines, dropping comments; it refuses a //go: directive other
// than build and embed, and non-ASCII outside strings and comments.
func goLex(src string) ([]pyTok, string) {
	if len(src) > maxPyScan {
		return nil, "is too long to check"
	}
	if !utf8.ValidString(src) {
		return nil, "is not UTF-8"
	}
	var out []pyTok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			out = append(out, pyTok{'o', "\n"})
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			if d := src[i : i+end]; strings.HasPrefix(d, "//go:") && !strings.HasPrefix(d, "//go:build") && !strings.HasPrefix(d, "//go:embed") {
				return nil, "has the compiler directive " + quote(strings.Fields(d)[0])
			} else if strings.HasPrefix(d, "//line") {
				return nil, "has a //line directive"
			}
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, "leaves a comment open"
			}
			if strings.Contains(src[i:i+end+4], "\n") {
				out = append(out, pyTok{'o', "\n"})
			}
			i += end + 4
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if c != '`' && (src[j] == '\\') {
					j++
				} else if c != '`' && src[j] == '\n' {
					return nil, "leaves a string open"
				}
				j++
			}
			if j >= len(src) {
				return nil, "leaves a string open"
			}
			out = append(out, pyTok{'s', src[i : j+1]})
			i = j + 1
		case isIdentStart(c) || (c >= '0' && c <= '9'):
			j := i
			for j < len(src) && (isIdentByte(src[j]) || (c >= '0' && c <= '9' && src[j] == '.')) {
				j++
			}
			kind := byte('n')
			if c >= '0' && c <= '9' {
				kind = 'd'
			}
			out = append(out, pyTok{kind, src[i:j]})
			i = j
		case c >= utf8.RuneSelf:
			return nil, "has non-ASCII text outside strings and comments"
		default:
			op := string(c)
			for _, o := range []string{"<<=", ">>=", "&^=", "...", ":=", "==", "!=", "<=", ">=", "&&", "||", "<-", "++", "--",
				"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "&^"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			out = append(out, pyTok{'o', op})
			i += len(op)
		}
	}
	return out, ""
}
