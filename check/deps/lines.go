package deps

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Each tool whose file a hand-written reader of this package mirrors splits that file into
// lines, and trims its whitespace, by its own language's rules, and the reader must split and
// trim as the tool does: a separator the tool honours and the reader does not hides what
// follows it (inside a comment, inside the previous value). pip reads a requirements file
// with Python's str.splitlines() and strips it with str.strip(); configparser (setup.cfg) and
// Python's tokenizer (setup.py) read a file in universal-newline mode; npm, pnpm and yarn 1 read
// .npmrc with the ini module, which splits at \r and \n and trims with JavaScript's trim().
// The TOML files are read by a TOML library, with TOML's own rules.
//
// A line is numbered, for the report, by the line git shows it on: one more than the "\n"
// before it (a "\r\n" is one line end), so a line the tool starts at another separator is
// listed at the line that holds it, where a reviewer finds it in the diff.

// line is one line of a file as its tool splits it, with its number as git shows the file.
type line struct {
	n    int
	text string
}

// pyLineBreak reports whether r ends a line for Python's str.splitlines() ("\r\n" is one
// break).
func pyLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitlines splits s as Python's str.splitlines() does: at every pyLineBreak, "\r\n" being
// one, with no empty line after a final break. A byte that is not UTF-8 is no break (pip
// decodes the file first; such a byte is what it could not decode).
func pySplitlines(s string) []line {
	var out []line
	n, start := 1, 0 // the line (as git counts) and the byte where the current line starts
	startN := 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !pyLineBreak(r) {
			i += size
			continue
		}
		out = append(out, line{startN, s[start:i]})
		if r == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			size = 2
		}
		if s[i+size-1] == '\n' {
			n++
		}
		i += size
		start, startN = i, n
	}
	if start < len(s) {
		out = append(out, line{startN, s[start:]})
	}
	return out
}

// universalLines splits s as Python reads a text file in universal-newline mode (configparser
// through open(), the tokenizer of a source file): at "\n", "\r\n" and a lone "\r", and only
// there; the last line may be empty.
func universalLines(s string) []line {
	var out []line
	n, start, startN := 1, 0, 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			out = append(out, line{startN, s[start:i]})
			n++
			start, startN = i+1, n
		case '\r':
			out = append(out, line{startN, s[start:i]})
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				n++
			}
			start, startN = i+1, n
		}
	}
	return append(out, line{startN, s[start:]})
}

// pySpace reports whether Python's str.isspace() (and its re's \s) takes r for whitespace: Go's
// unicode.IsSpace and the separators U+001C to U+001F.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pySpace) }

// pyIndent is the number of code points before the first one that is not Python whitespace
// (configparser's indentation of a line), or -1 for a blank line.
func pyIndent(s string) int {
	n := 0
	for _, r := range s {
		if !pySpace(r) {
			return n
		}
		n++
	}
	return -1
}

// jsSpace reports whether JavaScript's trim() and its regular expressions' \s take r for
// whitespace: Go's unicode.IsSpace without U+0085, and the byte order mark U+FEFF.
func jsSpace(r rune) bool {
	return r == 0xfeff || r != 0x85 && unicode.IsSpace(r)
}

// jsTrim is JavaScript's String.prototype.trim().
func jsTrim(s string) string { return strings.TrimFunc(s, jsSpace) }
