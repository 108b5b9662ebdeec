package githubtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// errorRecorder keeps what CheckInert reports instead of failing the test.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckInert: the template's own markup passes and is counted; markup that untrusted text
// could have brought (an element, attributes on <details>, a link, a comment, a declaration,
// an invisible character) is each reported.
func TestCheckInert(t *testing.T) {
	t.Parallel()
	in := githubtest.Inert{
		Elements:  map[string]bool{"p": true, "details": true, "summary": true, "code": true},
		Links:     []string{"https://example.com/run/1"},
		Comment:   func(raw string) bool { return strings.HasPrefix(raw, "<!-- marker:") },
		Invisible: func(r rune) bool { return r == '\u200b' },
	}
	ours := "<!-- marker:1 -->\n<details>\n<summary>Log</summary>\n\n`x`\n\n</details>\n\n[run](https://example.com/run/1)\n"
	rec := &errorRecorder{TB: t}
	if d, c := githubtest.CheckInert(rec, ours, in); d != 1 || c != 1 || len(rec.errs) != 0 {
		t.Fatalf("CheckInert(ours) = %d details, %d comments, %q; want 1, 1, none", d, c, rec.errs)
	}
	for _, tt := range []struct{ name, md, want string }{
		{"Element", "<img src=x>", "element"},
		{"DetailsOpen", "<details open>\n<summary>x</summary>\n\ny\n\n</details>\n", "element"},
		{"Link", "[x](https://evil.example/)", "link"},
		{"Comment", "a\n\n<!-- hidden -->\n", "<!-- hidden -->"},
		{"Declaration", "<!DOCTYPE html>\n", "DOCTYPE"},
		{"Invisible", "a\u200bb", "invisible"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorRecorder{TB: t}
			githubtest.CheckInert(rec, tt.md, in)
			if len(rec.errs) == 0 || !strings.Contains(strings.Join(rec.errs, "\n"), tt.want) {
				t.Errorf("CheckInert(%q) reported %q, want one naming %q", tt.md, rec.errs, tt.want)
			}
		})
	}
}
