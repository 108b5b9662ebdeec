package auth

import (
	"net/url"
	"strings"
	"testing"
)

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"":                        DefaultNext,
		"/runs/5":                 "/runs/5",
		"/runs?repo=o%2Fr&state=": "/runs?repo=o%2Fr&state=",
		"/":                       "/",
		"/runs/5#step-3":          "/runs/5#step-3",
	} {
		if got, err := SafeNext(next); err != nil || got != want {
			t.Errorf("SafeNext(%q) = %q, %v; want %q", next, got, err, want)
		}
	}
	for _, next := range []string{
		"//evil.example", "/\\evil.example", "\\\\evil.example", "https://evil.example", "http:/evil.example",
		"javascript:alert(1)", "evil.example", "runs/5", "/\t/evil.example", "/\n/evil.example", "/\r\n/x",
		" /runs", "/%2F%2Fevil.example", "/%2f/evil.example", "///evil.example", "/runs/\x00", "/" + strings.Repeat("a", 2000),
		"data:text/html,x", "/\x7f",
	} {
		if got, err := SafeNext(next); err == nil {
			t.Errorf("SafeNext(%q) = %q, want an error", next, got)
		}
	}
}

// FuzzSafeNext checks that whatever SafeNext accepts stays on this site, as a browser reads it:
// after dropping tabs and newlines and turning backslashes into slashes (the URL standard's
// rules for special schemes), it resolves to the same origin.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"", "/runs/5", "//evil", "/\\evil", "https://evil/", "/\t/evil", "/%2F%2Fevil", "/a/../../b", "/@evil", "/:evil", "/?next=//evil", "/#//evil", "/.//evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://frognano.example/runs/1")
	f.Fuzz(func(t *testing.T, next string) {
		got, err := SafeNext(next)
		if err != nil {
			return
		}
		browser := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(strings.TrimSpace(got))
		for _, s := range []string{got, browser} {
			u, err := url.Parse(s)
			if err != nil {
				t.Fatalf("accepted %q, which does not parse: %v", next, err)
			}
			if r := base.ResolveReference(u); r.Host != "frognano.example" || r.Scheme != "https" || r.User != nil {
				t.Fatalf("accepted %q, which leads to %s", next, r)
			}
		}
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") {
			t.Fatalf("accepted %q as %q", next, got)
		}
	})
}
