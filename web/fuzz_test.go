package web

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzInert: whatever a run's text holds, what the page shows is valid UTF-8 with no
// bidirectional control, zero-width or control character left (newline and tab aside), and
// no GitHub token.
func FuzzInert(f *testing.F) {
	for _, s := range []string{"", "plain", "a\u202eb", "\u2066x\u2069", "\x1b[31m", "a\xffb\xc0",
		"ghs_" + strings.Repeat("A", 36), "</details><script>x</script>", "\u200b\ufeff\u00ad", "line\r\nnext"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := inert(s)
		if !utf8.ValidString(out) {
			t.Fatalf("inert(%q) = %q is not valid UTF-8", s, out)
		}
		for _, c := range out {
			if hidden(c) {
				t.Fatalf("inert(%q) = %q keeps %U", s, out, c)
			}
		}
		if strings.Contains(out, "ghs_"+strings.Repeat("A", 36)) {
			t.Fatalf("inert(%q) keeps a token", s)
		}
	})
}
