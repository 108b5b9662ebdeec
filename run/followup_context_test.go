package run_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/hostiletest"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// review is a follow-up on PR 77 from review 555 of reviewer, as the queue's intake records it.
func review(t *testing.T, p *runtest.Pipeline, reviewer string) int64 {
	t.Helper()
	return p.Request(t, runtest.Request{Issue: 77, Labeler: reviewer, Kind: run.KindFollowUp,
		Request:    "(The review requests changes; its summary is empty.)",
		RequestURL: "https://github.example/octo/pager/pull/77#pullrequestreview-555", SourceID: 555})
}

// TestFollowUpFromAReviewCarriesItsLineComments: the review's line comments are read only after
// the reviewer's permission was checked, and reach the task with file, line and hunk; someone
// else's comment never does; the same review arriving again (its line comments are events of
// their own) starts nothing more; a reader's review reads nothing at all.
func TestFollowUpFromAReviewCarriesItsLineComments(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.LineComments = hostiletest.ReviewComments()
	p.Repo.LineComments[2].Author = "someone-else"
	id := review(t, p, "reviewer")
	if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSucceeded {
		t.Fatalf("review follow-up: %v %s", r, p.Row(t, id).State)
	}
	task := p.Runner.Specs()[0].Task
	for _, want := range []string{"## The reviewer's line comments", "### Comment 1: pager/pages.py, line 14 of the new code",
		"+    return range(1, n + 1)", "Page 0 must give an empty range", "tests/test_pages.py, lines 20 to 22"} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
	if strings.Contains(task, "This line moved") || strings.Contains(task, "print the env") {
		t.Errorf("someone else's or hidden text reached the task:\n%s", task)
	}
	if got := p.Repo.PermissionAsked(); len(got) != 1 || got[0] != "reviewer" || len(p.Repo.ReviewsAsked()) != 1 || p.Repo.ReviewsAsked()[0] != 555 {
		t.Errorf("permission asked of %v, reviews read %v", got, p.Repo.ReviewsAsked())
	}

	again := review(t, p, "reviewer")
	if r := p.Work(t, again, 1); !r.Completed() || p.Row(t, again).State != run.StateSkipped {
		t.Fatalf("the same review again: %v %s", r, p.Row(t, again).State)
	}
	if n := p.Runner.Calls(); n != 1 {
		t.Errorf("runner called %d times", n)
	}

	reader := runtest.New(t)
	reader.Repo.Perm = "read"
	reader.Repo.LineComments = hostiletest.ReviewComments()
	id = review(t, reader, "stranger")
	if r := reader.Work(t, id, 1); !r.Completed() || reader.Row(t, id).State != run.StateSkipped {
		t.Fatalf("reader's review: %v", r)
	}
	if len(reader.Repo.ReviewsAsked()) != 0 || reader.Runner.Calls() != 0 {
		t.Errorf("a reader's review was read (%v) or ran", reader.Repo.ReviewsAsked())
	}
}

// TestCIFollowUpShowsWhatFailed: a CI follow-up's task holds the failed checks' names,
// summaries, annotations and log lines, read from the failed suite; a suite that cannot be
// read (permanently) still starts the run, with a note.
func TestCIFollowUpShowsWhatFailed(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.PR.HeadSHA = ciSHA
	p.Repo.Failures = hostiletest.FailedChecks()
	req := runtest.Request{Issue: 77, Labeler: "github-actions",
		Kind: run.KindCI, Request: "The check suite of GitHub Actions (github-actions) concluded failure on commit " + ciSHA + ".", CISHA: ciSHA, SourceID: 31}
	id := p.Request(t, req)
	if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSucceeded {
		t.Fatalf("%v %s", r, p.Row(t, id).State)
	}
	task := p.Runner.Specs()[0].Task
	for _, want := range []string{"## What failed in CI", "### Check test (3.12) (github-actions): failure", "pytest exited with 1",
		"tests/test_pages.py:21 [failure] test_zero: AssertionError: assert [0] == []", "##[error]Process completed with exit code 1.",
		"The job's log is not shown: its log could not be read (404 Not Found)."} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
	if got := p.Repo.SuitesAsked(); len(got) != 1 || got[0] != 31 {
		t.Errorf("suites read: %v", got)
	}

	p2 := runtest.New(t)
	p2.Repo.PR.HeadSHA = ciSHA
	p2.Repo.FailNext("FailedChecks", fault.Permanent(errors.New("listing check runs: 403 Resource not accessible by integration")))
	id = p2.Request(t, req)
	if r := p2.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	if task := p2.Runner.Specs()[0].Task; !strings.Contains(task, "could not be read from GitHub") {
		t.Errorf("task:\n%s", task)
	}
}
