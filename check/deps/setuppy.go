package deps

import (
	"context"
	"fmt"
	"strings"
)

// setup.py is Python code that setuptools runs to learn the package's requirements; frognano
// never runs it. SCALIBR's setup extractor finds "name==1.0" in any quoted string of the file
// (a version-less requirement, a URL requirement or a list built at run time are missed, and
// nothing says so), so this file reads it statically instead, conservatively: the keyword
// arguments install_requires, setup_requires and extras_require of a setup(...) call, when
// each is a literal list (or, for extras_require, a literal dict of lists) of plain string
// literals, or a module-level name assigned such a literal once and used nowhere else.
// Everything else (a list built by code, read from a file, a ** argument, an f-string) is
// unread, with the reason.

// pyTok is a token of Python source: a name, a string literal, or one character of
// punctuation ("**" is one token).
type pyTok struct {
	kind  byte // 'n' name, 's' string, 'p' punctuation, 'o' other (numbers, ...)
	text  string
	plain bool // a string literal whose value is text: no prefix but r/u, no escape
	line  int
	col   int
	depth int // bracket depth before the token
}

// pyTokens tokenizes Python source far enough to find calls, keyword arguments and literals.
// Python ends a line of source at "\n", "\r\n" or a lone "\r" (universal newlines), so a
// comment or a one-quote string ends at either; a token's line is counted at "\n", as git
// shows the file, and its column from the last line end of either kind. Before, a lone "\r"
// was whitespace, so the code after it on a comment's line was read as comment.
func pyTokens(src string) []pyTok {
	var out []pyTok
	line, lineStart, depth := 1, 0, 0
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n' || c == '\r':
			if c == '\n' {
				line++
			}
			i++
			lineStart = i
		case c == ' ' || c == '\t' || c == '\f' || c == '\\':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case isPyNameStart(c):
			j := i
			for j < len(src) && (isPyNameStart(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && j-i <= 2 && strings.Trim(strings.ToLower(src[i:j]), "rbuf") == "" {
				t, n, lines := pyString(src[j:], strings.ToLower(src[i:j]))
				t.line, t.col, t.depth = line, i-lineStart, depth
				out = append(out, t)
				i = j + n
				if lines > 0 {
					line += lines
				}
				if k := strings.LastIndexAny(src[j:i], "\r\n"); k >= 0 {
					lineStart = j + k + 1
				}
				continue
			}
			out = append(out, pyTok{kind: 'n', text: src[i:j], line: line, col: i - lineStart, depth: depth})
			i = j
		case c == '\'' || c == '"':
			t, n, lines := pyString(src[i:], "")
			t.line, t.col, t.depth = line, i-lineStart, depth
			out = append(out, t)
			i += n
			line += lines
			if k := strings.LastIndexAny(src[i-n:i], "\r\n"); k >= 0 {
				lineStart = i - n + k + 1
			}
		default:
			text := src[i : i+1]
			if strings.HasPrefix(src[i:], "**") {
				text = "**"
			}
			kind := byte('p')
			if c >= '0' && c <= '9' || c >= 0x80 {
				kind = 'o'
			}
			t := pyTok{kind: kind, text: text, line: line, col: i - lineStart, depth: depth}
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
				t.depth = depth
			}
			out = append(out, t)
			i += len(text)
		}
	}
	return out
}

func isPyNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// pyString reads the string literal at the start of s (after its prefix): the token, how many
// bytes it took and how many newlines it crossed. A string is plain when it has no escape and
// no f or b prefix; an unterminated one runs to the end and is not plain.
func pyString(s, prefix string) (pyTok, int, int) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	plain := !strings.ContainsAny(prefix, "fb")
	for i := len(q); i < len(s); i++ {
		if s[i] == '\\' {
			plain = false // an escape, or a raw string's backslash: no requirement holds one
			i++
			if strings.HasPrefix(s[i:], "\r\n") {
				i++ // a backslash before "\r\n" continues the string, as before "\n"
			}
			continue
		}
		if len(q) == 1 && (s[i] == '\n' || s[i] == '\r') {
			break
		}
		if strings.HasPrefix(s[i:], q) {
			n := i + len(q)
			return pyTok{kind: 's', text: s[len(q):i], plain: plain}, n, strings.Count(s[:n], "\n")
		}
	}
	return pyTok{kind: 's'}, len(s), strings.Count(s, "\n")
}

// setupKeywords are the keyword arguments of setup() read, with the role of what they list.
var setupKeywords = map[string]string{"install_requires": "", "setup_requires": RoleBuild, "extras_require": ""}

// maxSetupCalls bounds the setup(...) calls read: each is read to its end.
const maxSetupCalls = 8

// parseSetupPy reads setup.py statically (see above).
func parseSetupPy(ctx context.Context, file string, content []byte) (*Manifest, error) {
	m := &Manifest{}
	r := &pyReader{file: file, m: m}
	toks := pyTokens(string(content))
	calls := 0
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if t.kind != 'n' || t.text != "setup" || toks[i+1].text != "(" {
			continue
		}
		if i > 0 && toks[i-1].kind == 'n' && toks[i-1].text == "def" {
			continue
		}
		if calls++; calls > maxSetupCalls {
			r.unread(t.line, "setup(...)", fmt.Sprintf("setup.py calls setup() more than %d times; the rest were not read", maxSetupCalls))
			break
		}
		end := closing(toks, i+1)
		for j := i + 2; j < end; j++ {
			a := toks[j]
			if a.depth != toks[i+1].depth+1 {
				continue
			}
			if a.text == "**" {
				r.unread(a.line, "setup(**...)", "setup() takes keyword arguments from a dict built when setup.py runs; frognano does not run it")
				continue
			}
			role, known := setupKeywords[a.text]
			if a.kind != 'n' || !known || j+2 >= end || toks[j+1].text != "=" || toks[j+2].text == "=" {
				continue
			}
			r.role = role
			readSetupValue(r, toks, j+2, a.text, a.line)
			r.role = ""
		}
	}
	if calls == 0 {
		r.unread(0, "", "no setup() call was found; what setup.py does when it runs is not read")
	}
	if err := r.finish(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// closing returns the index of the token that closes the bracket at open, or len(toks).
func closing(toks []pyTok, open int) int {
	for j := open + 1; j < len(toks); j++ {
		if toks[j].depth == toks[open].depth && strings.Contains(")]}", toks[j].text) && toks[j].kind == 'p' {
			return j
		}
	}
	return len(toks)
}

// readSetupValue reads the value of a keyword argument starting at toks[at].
func readSetupValue(r *pyReader, toks []pyTok, at int, kw string, line int) {
	v := toks[at]
	named := v.kind == 'n'
	if named {
		lit, ok := moduleLiteral(toks, v.text)
		if !ok {
			r.unread(line, kw+"="+v.text, "it is computed when setup.py runs (the name is not one literal assigned once); frognano does not run it")
			return
		}
		if at+1 < len(toks) && !strings.Contains(",)", toks[at+1].text) {
			r.unread(line, kw, "it is computed when setup.py runs; frognano does not run it")
			return
		}
		at = lit
	}
	end, ok := literalEnd(toks, at)
	if ok && end < len(toks) {
		if named {
			// The assignment's literal must be the whole statement.
			ok = toks[end].line > toks[end-1].line || toks[end].text == ";"
		} else {
			ok = toks[end].text == "," || toks[end].text == ")"
		}
	}
	if !ok {
		r.unread(line, kw, "it is not a literal list of strings; frognano does not run setup.py")
		return
	}
	if kw == "extras_require" {
		readExtras(r, toks[at:end], line)
		return
	}
	readStringList(r, toks[at:end], kw, line)
}

// literalEnd returns the end of the bracketed literal at toks[at].
func literalEnd(toks []pyTok, at int) (int, bool) {
	if at >= len(toks) || !strings.Contains("[({", toks[at].text) || toks[at].kind != 'p' {
		return at, false
	}
	c := closing(toks, at)
	if c == len(toks) {
		return c, false
	}
	return c + 1, true
}

// moduleLiteral finds the one module-level assignment NAME = [...] (or (...) or {...}) and
// returns the index of its literal; false when the name is assigned more than once, changed
// or used anywhere but the assignment and setup's keyword arguments.
func moduleLiteral(toks []pyTok, name string) (int, bool) {
	lit, uses := -1, 0
	for i, t := range toks {
		if t.kind != 'n' || t.text != name {
			continue
		}
		if t.col == 0 && t.depth == 0 && i+2 < len(toks) && toks[i+1].text == "=" && toks[i+2].text != "=" {
			if lit >= 0 {
				return 0, false
			}
			lit = i + 2
			continue
		}
		// A use: setup(KW=name) is the only one allowed.
		if i < 2 || toks[i-1].text != "=" || toks[i-2].kind != 'n' {
			return 0, false
		}
		if _, ok := setupKeywords[toks[i-2].text]; !ok {
			return 0, false
		}
		uses++
	}
	if lit < 0 || uses == 0 {
		return 0, false
	}
	return lit, true
}

// readStringList reads a literal list or tuple of plain strings.
func readStringList(r *pyReader, toks []pyTok, kw string, line int) {
	if len(toks) < 2 || toks[0].text == "{" {
		r.unread(line, kw, "it is not a literal list of strings; frognano does not run setup.py")
		return
	}
	expectValue := true
	for _, t := range toks[1 : len(toks)-1] {
		switch {
		case expectValue && t.kind == 's' && t.plain:
			r.requirement(reqLine{n: t.line, text: t.text})
			expectValue = false
		case !expectValue && t.text == ",":
			expectValue = true
		default:
			r.unread(t.line, kw, "an entry is not a plain string literal; frognano does not run setup.py")
			return
		}
	}
}

// readExtras reads a literal dict of extra names to lists (or one string) of requirements.
func readExtras(r *pyReader, toks []pyTok, line int) {
	if toks[0].text != "{" {
		r.unread(line, "extras_require", "it is not a literal dict; frognano does not run setup.py")
		return
	}
	body := toks[1 : len(toks)-1]
	for i := 0; i < len(body); {
		if body[i].kind != 's' || !body[i].plain || i+1 >= len(body) || body[i+1].text != ":" {
			r.unread(body[i].line, "extras_require", "an entry is not a plain string key with a literal value; frognano does not run setup.py")
			return
		}
		key := body[i].text
		v := i + 2
		if v >= len(body) {
			r.unread(body[i].line, "extras_require", "an entry has no value")
			return
		}
		var next int
		switch {
		case body[v].kind == 's' && body[v].plain:
			r.requirement(reqLine{n: body[v].line, text: body[v].text})
			next = v + 1
		default:
			end, ok := literalEnd(body, v)
			if !ok {
				r.unread(body[v].line, "extras_require "+key, "it is not a literal list of strings; frognano does not run setup.py")
				return
			}
			readStringList(r, body[v:end], "extras_require "+key, body[v].line)
			next = end
		}
		if next < len(body) && body[next].text != "," {
			r.unread(body[next].line, "extras_require", "frognano could not read it as a literal dict")
			return
		}
		i = next + 1
	}
}
