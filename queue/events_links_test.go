package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/runner"
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

// With FROGNANO_PUBLIC_URL set, the status comment links the run's page; the runner gets it
// through the context, for the pull request body and the check run's details_url.
func TestRunPageLinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PublicURL = "https://frognano.example.com/"
	var page string
	b.runner.set(func(ctx context.Context, spec RunSpec, _ func(Progress)) (*Outcome, error) {
		page = eventsFrom(ctx).pageURL()
		return goodOutcome(), nil
	})
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	want := "https://frognano.example.com/runs/" + strconv.FormatInt(res.RunID, 10)
	if page != want {
		t.Errorf("the runner's page URL = %q, want %q", page, want)
	}
	if body := b.repo.lastEdit().body; !strings.Contains(body, "The run's steps, patch and tests: "+want) {
		t.Errorf("final status comment lacks the link:\n%s", body)
	}

	out, err := outcomeOf(bigResult(), RunSpec{Issue: 7, PageURL: want})
	if err != nil {
		t.Fatal(err)
	}
	if out.Check.DetailsURL != want {
		t.Errorf("check run details_url = %q", out.Check.DetailsURL)
	}
	if !strings.HasSuffix(out.PRBody, pageLine(want)+fixesLine(7)) {
		t.Errorf("the body does not end with the link and the Fixes line: ...%s", out.PRBody[len(out.PRBody)-200:])
	}
	if n := utf8.RuneCountInString(out.PRBody); n > runner.GitHubBodyLimit {
		t.Errorf("the body with the link has %d characters, over GitHub's %d", n, runner.GitHubBodyLimit)
	}
	// Without a public URL nothing links anywhere.
	plain, err := outcomeOf(bigResult(), RunSpec{Issue: 7})
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
