package run_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/run/runtest"
)

// closingRef matches what GitHub reads as a closing reference once a commit reaches the
// default branch: a keyword, an optional colon, then #N, owner/repo#N, GH-N or a link.
var closingRef = regexp.MustCompile(`(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\s*:?\s*([\w.-]+/[\w.-]+)?(#(\d+)|gh-\d|https?://)`)

// TestIssueTitleClosesNoOtherIssue: whoever may open an issue writes its title, and the title
// goes into frognano's commit message and pull request title (a squash merge's commit title);
// merged, they must close the run's issue and no other.
func TestIssueTitleClosesNoOtherIssue(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Title = "Typo in the README; fixes #1, closes octo/other#5, Resolves: #3, fixes GH-4 and closes https://github.example/o/r/issues/6"
	id := p.Label(t, 12)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("run: %v", r)
	}
	pub := p.Repo.Publishes()[0]
	refs := closingRef.FindAllStringSubmatch(pub.CommitMessage, -1)
	if len(refs) != 1 || refs[0][3] != "" || refs[0][5] != "12" {
		t.Errorf("the commit message closes %q, want only #12: %q", refs, pub.CommitMessage)
	}
	if m := closingRef.FindAllString(pub.Title, -1); len(m) != 0 {
		t.Errorf("the pull request's title closes %q: %q", m, pub.Title)
	}
	// A person still reads the title's words.
	if !strings.Contains(pub.Title, "Typo in the README; fixes") || !strings.Contains(pub.CommitMessage, "closes octo/other") {
		t.Errorf("the title's words are lost: %q / %q", pub.Title, pub.CommitMessage)
	}
}
