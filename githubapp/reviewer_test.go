package githubapp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// TestReviewComments reads every line comment of a review through GitHub's pagination, with
// file, lines, side and hunk; a review of another pull request is not found.
func TestReviewComments(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	pub, err := b.client.Publish(ctx, in)
	number := pub.Number
	if err != nil {
		t.Fatal(err)
	}
	var specs []githubtest.ReviewCommentSpec
	for i := 1; i <= 130; i++ {
		specs = append(specs, githubtest.ReviewCommentSpec{Path: "calc/add.go", Line: i, Side: "RIGHT",
			DiffHunk: "@@ -1,3 +1,3 @@\n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }", Body: fmt.Sprintf("comment %d", i)})
	}
	specs[0].StartLine, specs[1].Line, specs[1].OriginalLine = 0, 0, 7 // an outdated comment
	id, _ := b.gh.AddReview(b.repo, number, "reviewer", specs...)
	got, more, err := b.client.ReviewComments(ctx, number, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxReviewComments || !more {
		t.Fatalf("%d comments, more %v; want %d and more", len(got), more, MaxReviewComments)
	}
	if c := got[0]; c.Path != "calc/add.go" || c.Line != 1 || c.Side != "RIGHT" || c.Author != "reviewer" ||
		!strings.Contains(c.DiffHunk, "+func Add(a, b int) int { return a + b }") || c.Body != "comment 1" || !strings.Contains(c.HTMLURL, "#discussion_r") {
		t.Errorf("first comment = %+v", c)
	}
	if c := got[1]; c.Line != 0 || c.OriginalLine != 7 {
		t.Errorf("outdated comment = %+v", c)
	}
	if got[99].Body != "comment 100" {
		t.Errorf("the second page was not read in order: %q", got[99].Body)
	}
	if n := b.gh.CountRequests("GET", "/repos/*/*/pulls/*/reviews/*/comments"); n != 1 {
		t.Errorf("%d page requests for 100 comments at 100 per page", n)
	}

	few, _ := b.gh.AddReview(b.repo, number, "reviewer", specs[:3]...)
	if got, more, err := b.client.ReviewComments(ctx, number, few); err != nil || len(got) != 3 || more {
		t.Errorf("a small review: %d comments, more %v, %v", len(got), more, err)
	}
	if _, _, err := b.client.ReviewComments(ctx, number+1, id); err == nil {
		t.Error("a review read through another pull request's number")
	}
}

const actionsLog = "2026-11-30T10:00:00.0000000Z ##[group]Run actions/checkout@v4\n" +
	"2026-11-30T10:00:01.0000000Z ##[endgroup]\n" +
	"2026-11-30T10:00:02.0000000Z ##[group]Run python -m pytest -q\n" +
	"2026-11-30T10:00:03.0000000Z tests/test_add.py F\n" +
	"2026-11-30T10:00:03.1000000Z E   assert Add(2, 2) == 4 (token ghs_abcdefghijklmnopqrstuvwxyz0123456789)\n" +
	"2026-11-30T10:00:04.0000000Z ##[error]Process completed with exit code 1.\n" +
	"2026-11-30T10:00:05.0000000Z Post job cleanup.\n" +
	"2026-11-30T10:00:06.0000000Z Cleaning up orphan processes\n"

// TestFailedChecks reads a failed suite's failed check runs with output, annotations and the
// end of the failed step's log. The log's download address is on another host (github.com's
// way): it is fetched with no credential at all; on the API's own host, with the token.
func TestFailedChecks(t *testing.T) {
	t.Parallel()
	for _, same := range []bool{false, true} {
		t.Run(map[bool]string{false: "LogOnAnotherHost", true: "LogOnTheAPIHost"}[same], func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *Config) { c.ChecksWrite = true })
			b.gh.SetLogsOnSameHost(same)
			var notes []githubtest.AnnotationSpec
			for i := 1; i <= 70; i++ {
				notes = append(notes, githubtest.AnnotationSpec{Path: "calc/add_test.go", StartLine: i, EndLine: i, Level: "failure", Message: fmt.Sprintf("failed %d", i)})
			}
			suite, ids := b.gh.AddCheckSuite(b.repo, strings.Repeat("a", 40), "github-actions",
				githubtest.CheckRunSpec{Name: "test", Conclusion: "failure", Title: "1 failed", Summary: "pytest failed", Annotations: notes, Log: actionsLog},
				githubtest.CheckRunSpec{Name: "build", Conclusion: "success", Summary: "ok"},
				githubtest.CheckRunSpec{Name: "lint", Conclusion: "timed_out", Summary: strings.Repeat("x", 10000)})
			checks, total, err := b.client.FailedChecks(context.Background(), suite)
			if err != nil {
				t.Fatal(err)
			}
			if total != 2 || len(checks) != 2 || checks[0].Name != "test" || checks[1].Name != "lint" {
				t.Fatalf("checks = %+v (total %d)", checks, total)
			}
			c := checks[0]
			if c.ID != ids[0] || c.App != "github-actions" || c.Conclusion != "failure" || c.Title != "1 failed" || c.Summary != "pytest failed" ||
				len(c.Annotations) != maxAnnotations || !c.MoreAnnotations || c.Annotations[0].Message != "failed 1" || c.Annotations[0].StartLine != 1 {
				t.Errorf("failed check = %+v", c)
			}
			want := "##[group]Run python -m pytest -q\ntests/test_add.py F\nE   assert Add(2, 2) == 4 (token [REDACTED])\n##[error]Process completed with exit code 1."
			if !strings.HasSuffix(c.Log, want) || strings.Contains(c.Log, "Post job cleanup") || strings.Contains(c.Log, "2026-11-30T") {
				t.Errorf("log excerpt:\n%s\nwant it to end with:\n%s", c.Log, want)
			}
			if l := checks[1]; len(l.Summary) > maxCheckTextBytes || !l.SummaryCut || l.Log != "" || !strings.Contains(l.LogNote, "404") {
				t.Errorf("second check: summary %d bytes (cut %v), log %q, note %q", len(l.Summary), l.SummaryCut, l.Log, l.LogNote)
			}
			downloads := b.gh.LogDownloads()
			if len(downloads) != 1 || downloads[0].SameHost != same {
				t.Fatalf("downloads = %+v", downloads)
			}
			if auth := downloads[0].Authorization; same != (auth != "") {
				t.Errorf("log download on the API host %v carried Authorization %q", same, auth)
			}
			var actions int
			for _, tr := range b.gh.TokenRequests() {
				if tr.Permissions["actions"] != "" {
					actions++
					if len(tr.Permissions) != 1 || tr.Permissions["actions"] != "read" || len(tr.Repositories) != 1 {
						t.Errorf("the logs token asked for %v on %v", tr.Permissions, tr.Repositories)
					}
				}
			}
			if actions != 1 { // one for all the suite's logs
				t.Errorf("%d tokens with actions: read", actions)
			}
		})
	}
}

// TestFailedChecksWithoutActionsPermission: an App that lacks actions: read loses the logs
// and nothing else; a suite that cannot be listed is an error.
func TestFailedChecksWithoutActionsPermission(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ChecksWrite = true })
	suite, _ := b.gh.AddCheckSuite(b.repo, strings.Repeat("b", 40), "github-actions",
		githubtest.CheckRunSpec{Name: "test", Conclusion: "failure", Summary: "pytest failed", Log: actionsLog})
	b.gh.FailNext("POST", "/app/installations/*/access_tokens", http.StatusUnprocessableEntity, nil, 1)
	checks, _, err := b.client.FailedChecks(context.Background(), suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Summary != "pytest failed" || checks[0].Log != "" || !strings.Contains(checks[0].LogNote, "actions: read") {
		t.Errorf("checks = %+v", checks)
	}
	if _, _, err := b.client.FailedChecks(context.Background(), suite+1000); err == nil {
		t.Error("an unknown suite gave no error")
	}
}

func TestFailedStepTail(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, log string
		lines     int
		want      string
	}{
		{"NoError", "a\nb\nc\n", 2, "b\nc"},
		{"ErrorRun", "w\nx\n##[error]one\n##[error]two\nafter\n", 3, "x\n##[error]one\n##[error]two"},
		{"CRLF", "2026-01-01T00:00:00.0000000Z a\r\n2026-01-01T00:00:00.0000000Z ##[error]b\r\n", 5, "a\n##[error]b"},
		{"Empty", "", 5, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := failedStepTail(tt.log, tt.lines, 1000); got != tt.want {
				t.Errorf("failedStepTail(%q) = %q, want %q", tt.log, got, tt.want)
			}
		})
	}
	if got := failedStepTail(strings.Repeat("é", 100), 10, 10); got != strings.Repeat("é", 10) {
		t.Errorf("cut = %q", got)
	}
}

// FuzzFailedStepTail: any log (CI output is the repository's) gives at most maxLines lines and
// maxChars characters, valid UTF-8 for valid input, and never panics.
func FuzzFailedStepTail(f *testing.F) {
	f.Add(actionsLog, 5, 100)
	f.Add("##[error]\n##[error]\n", 1, 3)
	f.Add("2026-11-30T10:00:00.0000000Z é\r\n", 0, 0)
	f.Add("\n\n\n", 2, 1)
	f.Fuzz(func(t *testing.T, log string, lines, chars int) {
		lines, chars = max(lines%200, 1), max(chars%10000, 0)
		got := failedStepTail(log, lines, chars)
		if n := strings.Count(got, "\n") + 1; got != "" && n > lines {
			t.Errorf("%d lines, want at most %d", n, lines)
		}
		if n := len([]rune(got)); n > chars {
			t.Errorf("%d characters, want at most %d", n, chars)
		}
		if utf8.ValidString(log) && !utf8.ValidString(got) {
			t.Errorf("invalid UTF-8 from valid input: %q", got)
		}
	})
}
