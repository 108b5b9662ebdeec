package run

import (
	"strings"

	"github.com/frognano/frognano/report"
)

// SanitizeIssueText removes what a human reading the issue on GitHub cannot
// see but a model would: HTML comments (an unterminated one hides the rest of
// the text, as it does on GitHub) and every character report.Invisible names
// (format characters such as zero-width spaces and joiners, bidi controls,
// tag characters, the BOM, soft hyphens; variation selectors; Hangul fillers;
// control characters other than newline and tab): the rule that decides what
// GitHub shows as nothing is runner's, here and in what frognano writes.
// Line endings (CR LF, CR, U+2028, U+2029) become \n and invalid UTF-8
// becomes U+FFFD.
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
		if report.Invisible(r) {
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
		case report.Invisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
