package patch

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A conservative reader of one new Python test module, written by the model: it decides
// whether the module only defines tests (see plainPython). It is not a Python parser. It
// reads what Python would read only where both surely agree, and refuses everything else:
// any byte that could end a line for Python but not for it (a carriage return, a form
// feed, any control character), a coding declaration (UTF-7 could hide code in a
// comment), a tab in indentation, non-ASCII outside strings and comments (NFKC makes
// "ｅｘｅｃ" exec), an f-string or t-string holding a quote or a backslash (3.12 nests
// quotes there), unbalanced brackets, a stray backslash, a semicolon. Refusing keeps the
// warning, so every doubt falls on the safe side.

// pyTok is one token: kind 'n' a name, 's' a string, 'd' a number, 'o' an operator.
type pyTok struct {
	kind byte
	text string
}

// pyLine is one logical line: its indentation (spaces), its tokens and its first
// physical line's number (from 1).
type pyLine struct {
	indent, line int
	toks         []pyTok
	fnames       []string // the names inside its f-strings, checked as code
}

// maxPyScan bounds the text the reader looks at; a longer new test module keeps the warning.
const maxPyScan = 256 << 10

var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "==", "!=", "<=", ">=", ":=", "->", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "@=", "**", "//", "<<", ">>"}

// pyLex splits src into logical lines, or says why it will not.
func pyLex(src string) ([]pyLine, string) {
	if len(src) > maxPyScan {
		return nil, "is too long to check"
	}
	if !utf8.ValidString(src) || strings.HasPrefix(src, "\ufeff") {
		return nil, "is not plain UTF-8"
	}
	for i := 0; i < len(src); i++ {
		if c := src[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return nil, fmt.Sprintf("holds the control character %#x", c)
		}
	}
	for i, l := range strings.SplitN(src, "\n", 3) {
		if i < 2 && strings.HasPrefix(strings.TrimSpace(l), "#") && strings.Contains(l, "coding") {
			return nil, "declares a source encoding"
		}
	}
	var (
		out   []pyLine
		cur   *pyLine
		depth int
		line  = 1
		bol   = true // at the beginning of a physical line outside brackets
	)
	for i := 0; i < len(src); {
		c := src[i]
		if bol && depth == 0 && cur == nil {
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				if src[j] == '\t' {
					return nil, fmt.Sprintf("indents with a tab (line %d)", line)
				}
				j++
			}
			bol = false
			if j < len(src) && src[j] != '\n' && src[j] != '#' {
				out = append(out, pyLine{indent: j - i, line: line})
				cur = &out[len(out)-1]
			}
			i = j
			continue
		}
		switch {
		case c == '\n':
			line++
			i++
			bol = true
			if depth == 0 {
				cur = nil
			}
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 >= len(src) || src[i+1] != '\n' {
				return nil, fmt.Sprintf("has a stray backslash (line %d)", line)
			}
			i += 2
			line++
		case c == ';':
			return nil, fmt.Sprintf("puts two statements on one line (line %d)", line)
		case c >= utf8.RuneSelf:
			return nil, fmt.Sprintf("has non-ASCII text outside strings and comments (line %d)", line)
		case c == '"' || c == '\'' || isIdentStart(c) || (c >= '0' && c <= '9') || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			if cur == nil {
				return nil, fmt.Sprintf("continues a line it does not start (line %d)", line)
			}
			n, why := pyWord(src, i, cur, &line)
			if why != "" {
				return nil, why
			}
			i = n
		default:
			if cur == nil {
				return nil, fmt.Sprintf("continues a line it does not start (line %d)", line)
			}
			op := string(c)
			for _, o := range pyOps {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth--; depth < 0 {
					return nil, fmt.Sprintf("closes a bracket it did not open (line %d)", line)
				}
			}
			if !strings.Contains("()[]{},:.=+-*/%<>!&|^~@", op[:1]) {
				return nil, fmt.Sprintf("has the character %q outside strings (line %d)", op, line)
			}
			cur.toks = append(cur.toks, pyTok{'o', op})
			i += len(op)
		}
	}
	if depth != 0 {
		return nil, "leaves a bracket open"
	}
	return out, ""
}

func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isIdentByte(c byte) bool  { return isIdentStart(c) || (c >= '0' && c <= '9') }

// pyWord reads a name, a number or a string (with its prefix) starting at i into cur.
func pyWord(src string, i int, cur *pyLine, line *int) (int, string) {
	c := src[i]
	if (c >= '0' && c <= '9') || c == '.' {
		j := i
		for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' ||
			((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
			j++
		}
		cur.toks = append(cur.toks, pyTok{'d', src[i:j]})
		return j, ""
	}
	j := i
	for j < len(src) && isIdentByte(src[j]) {
		j++
	}
	prefix := strings.ToLower(src[i:j])
	if j >= len(src) || (src[j] != '"' && src[j] != '\'') {
		cur.toks = append(cur.toks, pyTok{'n', src[i:j]})
		return j, ""
	}
	switch prefix {
	case "", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt":
	default:
		return 0, fmt.Sprintf("has a string with the unknown prefix %q (line %d)", prefix, *line)
	}
	q := src[j : j+1]
	if strings.HasPrefix(src[j:], q+q+q) {
		q += q + q
	}
	start := j + len(q)
	k := start
	for {
		if k >= len(src) {
			return 0, "leaves a string open"
		}
		if strings.HasPrefix(src[k:], q) {
			break
		}
		switch src[k] {
		case '\\':
			k++
			if k < len(src) && src[k] == '\n' {
				*line++
			}
		case '\n':
			if len(q) == 1 {
				return 0, fmt.Sprintf("leaves a string open at the end of line %d", *line)
			}
			*line++
		}
		k++
	}
	body := src[start:k]
	if strings.ContainsAny(prefix, "ft") {
		if strings.ContainsAny(body, "'\"\\") {
			return 0, fmt.Sprintf("has an f-string with a quote or a backslash inside (line %d)", *line)
		}
		// Everything between braces runs as code; every name of the string is checked as one.
		for w := range strings.FieldsFuncSeq(body, func(r rune) bool { return r > 0x7f || !isIdentByte(byte(r)) }) {
			if isIdentStart(w[0]) {
				cur.fnames = append(cur.fnames, w)
			}
		}
	}
	cur.toks = append(cur.toks, pyTok{'s', src[i : k+len(q)]})
	return k + len(q), ""
}
