package queue

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SanitizeIssueText removes what a human reading the issue on GitHub cannot
// see but a model would: HTML comments (an unterminated one hides the rest of
// the text, as it does on GitHub) and invisible or direction-changing Unicode
// (format characters such as zero-width spaces and joiners, bidi controls
// U+202A-202E and U+2066-2069, tag characters U+E0000-E007F, the BOM, soft
// hyphens; variation selectors; Hangul fillers; control characters other than
// newline and tab). Line endings become \n and invalid UTF-8 becomes U+FFFD.
//
// The result is idempotent: sanitizing it again changes nothing.
func SanitizeIssueText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for {
		// Removing invisibles can join "<!" and "--" into a new comment, and
		// removing a comment can join its neighbours into another: repeat
		// until nothing changes. Each pass shrinks s, so this terminates.
		next := stripHTMLComments(stripInvisible(s))
		if next == s {
			return s
		}
		s = next
	}
}

func stripHTMLComments(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		start := strings.Index(s, "<!--")
		if start < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:start])
		end := strings.Index(s[start+4:], "-->")
		if end < 0 {
			return b.String()
		}
		s = s[start+4+end+3:]
	}
}

func stripInvisible(s string) string {
	clean := true
	for _, r := range s {
		if invisible(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\r' || r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case invisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// invisible reports whether r renders as nothing (or reorders text) on GitHub.
func invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == '\r' || r == '\u2028' || r == '\u2029':
		return true // rewritten as \n by stripInvisible
	case r == utf8.RuneError:
		return false // the visible replacement character
	case unicode.Is(unicode.Cc, r), // controls (NUL, ESC, DEL, C1)
		unicode.Is(unicode.Cf, r),                                // format: ZW*, bidi, tags, BOM, soft hyphen
		r >= 0xE0000 && r <= 0xE007F,                             // tag block, including unassigned
		r >= 0xFE00 && r <= 0xFE0F,                               // variation selectors
		r >= 0xE0100 && r <= 0xE01EF,                             // variation selectors supplement
		r >= 0x180B && r <= 0x180F,                               // Mongolian free variation selectors
		r == 0x034F,                                              // combining grapheme joiner
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0, // Hangul fillers
		r == 0x2800:                                              // braille blank
		return true
	}
	return false
}
