package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp/githubtest"
)

var markdownSeeds = []string{
	"python3 -m unittest -q 2>&1 | tail -n 1", "echo `whoami`", "``", "` x `", " ", "a  b", "<details>", "<!-- x",
	"*a* _b_ ~~c~~ [l](javascript:x) https://x.example @u #1", "x\u202ey\u200b\U000E0041", "\\|", "&amp; &lt;", "\x00\x1b[2J",
	"line1\nline2\r\nline3\rx\ttab", "```\n~~~\n", "    indented\n\n\nblank", "\xff\xfe invalid",
}

// renderedCode renders md as GitHub would and returns the text of its only code element.
func renderedCode(t *testing.T, md string) string {
	t.Helper()
	html := githubtest.ShowAsGitHub(md)
	codes := githubtest.ElementTexts(html, "code")
	if len(codes) != 1 {
		t.Fatalf("%q renders %d code elements: %s", md, len(codes), html)
	}
	for _, tok := range githubtest.Tokenize(githubtest.RenderMarkdown(md)) {
		if tok.Kind != githubtest.TextToken && tok.Name != "p" && tok.Name != "code" && tok.Name != "pre" && tok.Name != "td" {
			t.Fatalf("%q renders %q", md, tok.Raw)
		}
	}
	return codes[0]
}

// A code span shows exactly Visible(s), in a paragraph and in a table cell.
func FuzzCodeSpan(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := Visible(s)
		if want == "" {
			return
		}
		if got := renderedCode(t, "x "+codeSpan(s, 0)+" y\n"); got != want {
			t.Errorf("code span of %q shows %q, want %q", s, got, want)
		}
		table := "| a |\n|---|\n| " + codeCell(s, 0) + " |\n"
		if got := githubtest.ElementTexts(githubtest.ShowAsGitHub(table), "code"); len(got) != 1 || got[0] != want {
			t.Errorf("code cell of %q shows %q, want %q", s, got, want)
		}
	})
}

// A code block shows s with invisible characters as code points; an exact block also keeps
// a final newline visible.
func FuzzCodeBlock(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := visible(s, true)
		want := v
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		// goldmark, as CommonMark, reads a lone CR as a line ending.
		if strings.Contains(v, "\r") {
			return
		}
		if got := renderedCode(t, codeBlock(s, "text")); got != want {
			t.Errorf("code block of %q shows %q, want %q", s, got, want)
		}
		if got := renderedCode(t, exactBlock(s, "sh")); got != v+"\n" {
			t.Errorf("exact block of %q shows %q, want %q", s, got, v+"\n")
		}
	})
}

// Prose shows the words of s, one line, and nothing of it becomes an element other than
// code.
func FuzzProse(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md := prose(s, 0)
		for _, tok := range githubtest.Tokenize(githubtest.RenderMarkdown(md)) {
			if tok.Kind != githubtest.TextToken && tok.Name != "p" && tok.Name != "code" {
				t.Fatalf("prose of %q renders %q", s, tok.Raw)
			}
		}
		want := Visible(strings.Join(strings.Fields(s), " "))
		got := strings.TrimSpace(githubtest.VisibleText(githubtest.ShowAsGitHub(md)))
		if got != strings.TrimSpace(want) {
			t.Errorf("prose of %q shows %q, want %q", s, got, want)
		}
		for _, r := range got {
			if Invisible(r) || r == utf8.RuneError && !strings.ContainsRune(s, utf8.RuneError) && utf8.ValidString(s) {
				t.Errorf("prose of %q shows %U", s, r)
			}
		}
	})
}
