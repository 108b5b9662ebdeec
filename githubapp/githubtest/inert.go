package githubtest

import "testing"

// Inert is the markup CheckInert allows in rendered markdown: what frognano's own templates
// write. Anything else in the HTML came from untrusted text.
type Inert struct {
	// Elements are the elements the templates write. <details> and <summary> must also be
	// bare, as the templates write them.
	Elements map[string]bool
	// Links are the only href values an <a> may have; none is allowed when empty.
	Links []string
	// Comment reports whether an HTML comment, as written, is the template's own (a marker);
	// with nil, none is.
	Comment func(raw string) bool
	// Invisible reports a character a reader must not see (frognano's rule is
	// runner.Invisible, which this package cannot import); nil checks none.
	Invisible func(rune) bool
}

// CheckInert proves on the HTML that GitHub renders from md that nothing in it came from
// untrusted text: no declaration, no comment but the template's own, every element one of
// in.Elements (<details> and <summary> bare), links only to in.Links, and no invisible
// character in what a reader sees. Each breach is a t.Errorf. It returns how many <details>
// elements and comments the HTML holds, for the caller to compare with what its template
// writes.
func CheckInert(t testing.TB, md string, in Inert) (details, comments int) {
	t.Helper()
	for _, tok := range Tokenize(RenderMarkdown(md)) {
		switch tok.Kind {
		case CommentToken:
			comments++
			if in.Comment == nil || !in.Comment(tok.Raw) {
				t.Errorf("rendered HTML holds %q", tok.Raw)
			}
		case DeclarationToken:
			t.Errorf("rendered HTML holds %q", tok.Raw)
		case StartTagToken:
			if tok.Name == "a" {
				ok := false
				for _, l := range in.Links {
					ok = ok || tok.Attributes["href"] == l
				}
				if !ok {
					t.Errorf("rendered HTML holds a link %q", tok.Raw)
				}
				continue
			}
			if !in.Elements[tok.Name] || (tok.Name == "details" || tok.Name == "summary") && len(tok.Attributes) > 0 {
				t.Errorf("rendered HTML holds element %q", tok.Raw)
			}
			if tok.Name == "details" {
				details++
			}
		}
	}
	if in.Invisible != nil {
		for _, r := range VisibleText(ShowAsGitHub(md)) {
			if in.Invisible(r) {
				t.Errorf("a reader's text holds invisible character %U", r)
			}
		}
	}
	return details, comments
}
