package run

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/report"
)

func TestRunPageURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ base, want string }{
		{"", ""},
		{"https://frognano.example.com", "https://frognano.example.com/runs/12"},
		{"https://frognano.example.com/", "https://frognano.example.com/runs/12"},
		{" http://127.0.0.1:8080 ", "http://127.0.0.1:8080/runs/12"},
	}
	for _, tt := range tests {
		if got := RunPageURL(tt.base, 12); got != tt.want {
			t.Errorf("RunPageURL(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
}

// With a page, the pull request body and the check run link to it (the worker's half, which
// hands the runner the page, is queue's TestRunPageLinks).
func TestOutcomeLinksThePage(t *testing.T) {
	t.Parallel()
	want := "https://frognano.example.com/runs/12"
	out, err := OutcomeOf(bigResult(), RunSpec{Issue: 7, PageURL: want})
	if err != nil {
		t.Fatal(err)
	}
	if out.Check.DetailsURL != want {
		t.Errorf("check run details_url = %q", out.Check.DetailsURL)
	}
	if !strings.HasSuffix(out.PRBody, pageLine(want)+fixesLine(7)) {
		t.Errorf("the body does not end with the link and the Fixes line: ...%s", out.PRBody[len(out.PRBody)-200:])
	}
	if n := utf8.RuneCountInString(out.PRBody); n > report.GitHubBodyLimit {
		t.Errorf("the body with the link has %d characters, over GitHub's %d", n, report.GitHubBodyLimit)
	}
	// Without a public URL nothing links anywhere.
	plain, err := OutcomeOf(bigResult(), RunSpec{Issue: 7})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Check.DetailsURL != "" || strings.Contains(plain.PRBody, "/runs/") {
		t.Error("a link without FROGNANO_PUBLIC_URL")
	}
}

func ExampleRunPageURL() {
	fmt.Println(RunPageURL("https://frognano.example.com/", 42))
	fmt.Printf("%q\n", RunPageURL("", 42)) // FROGNANO_PUBLIC_URL unset: no links
	// Output:
	// https://frognano.example.com/runs/42
	// ""
}
