package githubapp

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// closing matches what GitHub reads as a closing reference: a keyword, an optional colon,
// then #N, owner/repo#N, GH-N or a link.
var closing = regexp.MustCompile(`(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\s*:?\s*([\w.-]+/[\w.-]+)?(#\d|gh-\d|https?://)`)

func TestInertReferences(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Typo in the README", "Typo in the README"},
		{"fixes #1, closes octo/other#5 and Resolves: #3", "fixes ＃1, closes octo/other＃5 and Resolves: ＃3"},
		{"resolves GH-7 and gh-8", "resolves GH\u20117 and GH\u20118"},
		{"closes https://github.example/o/r/issues/9", "closes https: //github.example/o/r/issues/9"},
		{"C# parser crashes on #[attr]", "C＃ parser crashes on ＃[attr]"},
	} {
		if got := InertReferences(c.in); got != c.want {
			t.Errorf("InertReferences(%q) = %q, want %q", c.in, got, c.want)
		}
		if m := closing.FindString(InertReferences(c.in)); m != "" {
			t.Errorf("InertReferences(%q) still holds %q", c.in, m)
		}
	}
}

// FuzzInertReferences: whatever the title, what comes out holds no closing reference GitHub
// would act on, and valid text stays valid.
func FuzzInertReferences(f *testing.F) {
	for _, s := range []string{"fixes #1", "Closes: octo/r#2", "resolved GH-3", "fix https://x/o/r/issues/4", "##", "gh-gh-1", "fixgh-1", "\xff#1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := InertReferences(s)
		if m := closing.FindString(out); m != "" {
			t.Errorf("InertReferences(%q) = %q still holds %q", s, out, m)
		}
		if strings.Contains(out, "#") {
			t.Errorf("InertReferences(%q) = %q holds a number sign", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("InertReferences(%q) = %q is not valid UTF-8", s, out)
		}
	})
}
