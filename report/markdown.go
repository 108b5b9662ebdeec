package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/frognano/frognano/internal/clip"
)

// This file owns how untrusted text (what the model wrote, file names, test output, error
// messages) is written into the markdown GitHub shows: the PR body, the status comment and
// report.md. Every such string goes through one of the primitives below, which guarantee
// that GitHub shows it as text, exactly as written, and never as markup:
//
//   - codeSpan and codeCell: one line inside an inline code span (no HTML, no link, no
//     mention, no emphasis), with backtick runs and edge spaces handled so the visible text
//     is the input itself;
//   - codeBlock: many lines inside a fenced code block longer than any backtick run inside;
//   - prose: a one-line sentence with every markdown punctuation character escaped and the
//     words GitHub would turn into links or notifications (@user, #12, URLs, commit ids)
//     put in code spans.
//
// Characters that GitHub shows as nothing or that reorder the text around them (controls,
// zero-width and bidi format characters, tag characters, variation selectors, ...) are
// written as their code point, such as <U+202E>.

// Invisible reports whether GitHub would show r as nothing or let it change how the text
// around it reads: controls other than newline and tab, format characters (zero-width
// spaces and joiners, bidi controls U+202A-202E and U+2066-2069, the BOM, soft hyphens,
// tag characters), line and paragraph separators, variation selectors, the combining
// grapheme joiner, Hangul fillers and the braille blank.
func Invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == utf8.RuneError:
		return false // the visible replacement character
	case unicode.Is(unicode.Cc, r),
		unicode.Is(unicode.Cf, r),
		r == '\u2028' || r == '\u2029',
		r >= 0xE0000 && r <= 0xE007F,
		r >= 0xFE00 && r <= 0xFE0F,
		r >= 0xE0100 && r <= 0xE01EF,
		r >= 0x180B && r <= 0x180F,
		r == 0x034F,
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0,
		r == 0x2800:
		return true
	}
	return false
}

// Visible returns s with every Invisible character, and newline and tab too, written as
// its code point ("<U+202E>"), and invalid UTF-8 as U+FFFD: one line, every character of
// which a reader can see.
func Visible(s string) string { return visible(s, false) }

// visible writes every Invisible character as its code point. With layout, newlines and
// tabs are kept (a CR LF pair becomes a newline), for code blocks.
func visible(s string, layout bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	clean := true
	for _, r := range s {
		if Invisible(r) || !layout && (r == '\n' || r == '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, r := range s {
		switch {
		case layout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case layout && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
		case Invisible(r) || r == '\n' || r == '\t':
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CodeSpan renders untrusted one-line text as an inline code span that GitHub shows as
// Visible(s), cut to max characters (max <= 0: all) with the cut said after the span.
func CodeSpan(s string, max int) string { return codeSpan(s, max) }

// codeSpan renders s as one inline code span whose visible text is Visible(s) cut to max
// characters; what was cut is said after the span, outside it.
func codeSpan(s string, max int) string {
	v, more := cutVisible(Visible(s), max)
	return span(v, false) + moreNote(more)
}

// codeCell is codeSpan for a table cell: a pipe would end the cell, so it is escaped (GFM
// removes the backslash again, inside code spans too).
func codeCell(s string, max int) string {
	v, more := cutVisible(Visible(s), max)
	return span(v, true) + moreNote(more)
}

func span(v string, cell bool) string {
	if v == "" {
		return "_(empty)_"
	}
	if cell {
		v = strings.ReplaceAll(v, "|", `\|`)
	}
	ticks := strings.Repeat("`", longestRun(v, '`')+1)
	// A span that starts or ends with a backtick or a space needs a space of padding on
	// both sides; GitHub removes one from each side again. Only-space content is shown
	// as is.
	if strings.Trim(v, " ") != "" && (strings.HasPrefix(v, "`") || strings.HasSuffix(v, "`") ||
		strings.HasPrefix(v, " ") || strings.HasSuffix(v, " ")) {
		return ticks + " " + v + " " + ticks
	}
	return ticks + v + ticks
}

// codeBlock renders s as a fenced code block whose visible text is s (invisible
// characters written as code points), one newline added when s lacks a final one. info is
// the block's language ("text", "sh").
func codeBlock(s, info string) string {
	v := visible(s, true)
	if !strings.HasSuffix(v, "\n") {
		v += "\n"
	}
	f := strings.Repeat("`", max(3, longestRun(v, '`')+1))
	return f + info + "\n" + v + f + "\n"
}

// exactBlock renders s as a fenced code block whose visible text is exactly s plus one
// newline (so a final newline of s shows as an empty last line), for tool-call arguments.
func exactBlock(s, info string) string {
	v := visible(s, true) + "\n"
	f := strings.Repeat("`", max(3, longestRun(v, '`')+1))
	return f + info + "\n" + v + f + "\n"
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// prose renders an untrusted one-line sentence (an error message, a note that quotes one)
// as plain text: markdown punctuation is escaped, and words that GitHub would turn into a
// mention, an issue or commit link, an emoji or a URL go into code spans, where it leaves
// them alone.
func prose(s string, max int) string {
	v, more := cutVisible(Visible(strings.Join(strings.Fields(s), " ")), max)
	words := strings.Split(v, " ")
	for i, w := range words {
		if linky(w) {
			words[i] = span(w, false)
		} else {
			words[i] = escapePunct(w)
		}
	}
	return strings.Join(words, " ") + moreNote(more)
}

func linky(w string) bool {
	l := strings.ToLower(w)
	switch {
	case strings.ContainsAny(w, "@#"), strings.Contains(l, "www."), strings.Contains(l, "gh-"):
		return true // mentions, issue references, bare links
	case strings.Count(w, ":") >= 2, strings.Contains(strings.TrimRight(w, ":.,;)"), ":"):
		return true // :emoji:, scheme://, scheme:rest
	}
	hex := 0
	for _, r := range w {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' {
			hex++
			if hex >= 7 {
				return true // GitHub links commit ids
			}
		} else {
			hex = 0
		}
	}
	return false
}

// escapePunct backslash-escapes every ASCII punctuation character, which CommonMark then
// shows as itself: no emphasis, link, HTML, heading, list or table can start.
func escapePunct(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(asciiPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// cutVisible keeps at most max characters of v (max <= 0: all) without splitting a
// <U+XXXX> code point, and says how many characters were left out.
func cutVisible(v string, max int) (string, int) {
	if max <= 0 {
		return v, 0
	}
	head, more := clip.Runes(v, max)
	if more == 0 {
		return v, 0
	}
	n := max + more
	if i := strings.LastIndex(head, "<U+"); i >= 0 && len(head)-i < 10 && !strings.Contains(head[i:], ">") {
		head = head[:i]
	}
	return head, n - utf8.RuneCountInString(head)
}

func moreNote(more int) string {
	if more == 0 {
		return ""
	}
	return fmt.Sprintf(" … (%d more characters)", more)
}

// plain is what a terminal may show of untrusted text: one line, invisible characters as
// code points, at most n characters.
func plain(s string, n int) string {
	v := Visible(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(v) <= n {
		return v
	}
	cut, _ := cutVisible(v, n-1)
	return cut + "…"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
