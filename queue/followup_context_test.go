package queue

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/hostiletest"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
)

// fakeReviewer is what fakeRepo answers for a review's line comments and a suite's failed
// checks, and what it was asked.
type fakeReviewer struct {
	comments     []githubapp.ReviewComment
	checks       []githubapp.FailedCheck
	reviewsAsked []int64
	suitesAsked  []int64
}

func (f *fakeRepo) ReviewComments(_ context.Context, _ int, reviewID int64) ([]githubapp.ReviewComment, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviewer.reviewsAsked = append(f.reviewer.reviewsAsked, reviewID)
	return f.reviewer.comments, false, f.pop("ReviewComments")
}

func (f *fakeRepo) FailedChecks(_ context.Context, suiteID int64) ([]githubapp.FailedCheck, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviewer.suitesAsked = append(f.reviewer.suitesAsked, suiteID)
	return f.reviewer.checks, len(f.reviewer.checks), f.pop("FailedChecks")
}

// acceptReview asks for a follow-up on PR 77 from review 555 of reviewer.
func (b *bundle) acceptReview(t *testing.T, reviewer string) Accepted {
	t.Helper()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: reviewer,
		Kind: run.KindFollowUp, Request: "(The review requests changes; its summary is empty.)",
		RequestURL: "https://github.example/octo/pager/pull/77#pullrequestreview-555", SourceID: 555}
	res, err := b.client.Accept(context.Background(), b.delivery("pull_request_review", "submitted"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	return res
}

// TestFollowUpFromAReviewCarriesItsLineComments: the review's line comments are read only after
// the reviewer's permission was checked, and reach the task with file, line and hunk; someone
// else's comment never does; the same review arriving again (its line comments are events of
// their own) starts nothing more; a reader's review reads nothing at all.
func TestFollowUpFromAReviewCarriesItsLineComments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.reviewer.comments = hostiletest.ReviewComments()
	b.repo.reviewer.comments[2].Author = "someone-else"
	res := b.acceptReview(t, "reviewer")
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded {
		t.Fatalf("review follow-up: %v %s", r, b.row(t, res.RunID).State)
	}
	task := b.runner.specs[0].Task
	for _, want := range []string{"## The reviewer's line comments", "### Comment 1: pager/pages.py, line 14 of the new code",
		"+    return range(1, n + 1)", "Page 0 must give an empty range", "tests/test_pages.py, lines 20 to 22"} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
	if strings.Contains(task, "This line moved") || strings.Contains(task, "print the env") {
		t.Errorf("someone else's or hidden text reached the task:\n%s", task)
	}
	if got := b.repo.permAsked; len(got) != 1 || got[0] != "reviewer" || len(b.repo.reviewer.reviewsAsked) != 1 || b.repo.reviewer.reviewsAsked[0] != 555 {
		t.Errorf("permission asked of %v, reviews read %v", got, b.repo.reviewer.reviewsAsked)
	}

	again := b.acceptReview(t, "reviewer")
	if r := b.work(t, again, 1); !r.completed() || b.row(t, again.RunID).State != run.StateSkipped {
		t.Fatalf("the same review again: %v %s", r, b.row(t, again.RunID).State)
	}
	if n := b.runner.calls.Load(); n != 1 {
		t.Errorf("runner called %d times", n)
	}

	reader := setup(t)
	reader.repo.perm = "read"
	reader.repo.reviewer.comments = hostiletest.ReviewComments()
	res = reader.acceptReview(t, "stranger")
	if r := reader.work(t, res, 1); !r.completed() || reader.row(t, res.RunID).State != run.StateSkipped {
		t.Fatalf("reader's review: %v", r)
	}
	if len(reader.repo.reviewer.reviewsAsked) != 0 || reader.runner.calls.Load() != 0 {
		t.Errorf("a reader's review was read (%v) or ran", reader.repo.reviewer.reviewsAsked)
	}
}

// TestCIFollowUpShowsWhatFailed: a CI follow-up's task holds the failed checks' names,
// summaries, annotations and log lines, read from the failed suite; a suite that cannot be
// read (permanently) still starts the run, with a note.
func TestCIFollowUpShowsWhatFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.pr.HeadSHA = ciSHA
	b.repo.reviewer.checks = hostiletest.FailedChecks()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "github-actions",
		Kind: run.KindCI, Request: "The check suite of GitHub Actions (github-actions) concluded failure on commit " + ciSHA + ".", CISHA: ciSHA, SourceID: 31}
	res, err := b.client.Accept(context.Background(), b.delivery("check_suite", "completed"), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded {
		t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
	}
	task := b.runner.specs[0].Task
	for _, want := range []string{"## What failed in CI", "### Check test (3.12) (github-actions): failure", "pytest exited with 1",
		"tests/test_pages.py:21 [failure] test_zero: AssertionError: assert [0] == []", "##[error]Process completed with exit code 1.",
		"The job's log is not shown: its log could not be read (404 Not Found)."} {
		if !strings.Contains(task, want) {
			t.Errorf("task lacks %q:\n%s", want, task)
		}
	}
	if got := b.repo.reviewer.suitesAsked; len(got) != 1 || got[0] != 31 {
		t.Errorf("suites read: %v", got)
	}

	b2 := setup(t)
	b2.repo.pr.HeadSHA = ciSHA
	b2.repo.failNext("FailedChecks", fault.Permanent(errors.New("listing check runs: 403 Resource not accessible by integration")))
	res, err = b2.client.Accept(context.Background(), b2.delivery("check_suite", "completed"), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := b2.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	if task := b2.runner.specs[0].Task; !strings.Contains(task, "could not be read from GitHub") {
		t.Errorf("task:\n%s", task)
	}
}

// TestReviewCommentsOfTheActiveRunAreNotMoreRequests: the line comments of the review an active
// follow-up answers arrive as requests of their own; they are part of that run, and the line
// comments of a review that waits are part of its waiting run; a request from elsewhere waits
// while the active run is unchecked and is counted once it has passed its check.
func TestReviewCommentsOfTheActiveRunAreNotMoreRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.acceptReview(t, "reviewer")
	again := b.acceptReview(t, "reviewer") // a line comment of review 555
	if !again.AlreadyActive || again.RunID != first.RunID {
		t.Fatalf("second request: %+v", again)
	}
	other := b.acceptFollowUp(t, "reviewer", "@frognano and rename x")
	if !other.Waiting {
		t.Fatalf("third request: %+v", other)
	}
	// A second review (another reviewer's: one person waits once) waits once, however many
	// line comments it has.
	second := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "reviewer2",
		Kind: run.KindFollowUp, Request: "(The review requests changes.)", SourceID: 556}
	var waiting []int64
	for range 3 {
		res, err := b.client.Accept(context.Background(), b.delivery("pull_request_review_comment", "created"), second)
		if err != nil || !res.Waiting {
			t.Fatalf("the second review: %+v, %v", res, err)
		}
		waiting = append(waiting, res.RunID)
	}
	if waiting[0] == other.RunID || waiting[1] != waiting[0] || waiting[2] != waiting[0] {
		t.Errorf("the second review's line comments made runs %v (the other request's is %d)", waiting, other.RunID)
	}
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET checked_at = now() WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	counted := b.acceptFollowUp(t, "reviewer", "@frognano and rename y")
	if !counted.AlreadyActive || counted.RunID != first.RunID {
		t.Fatalf("a request after the check: %+v", counted)
	}
	var extra int
	if err := b.pool.QueryRow(context.Background(), `SELECT extra_requests FROM runs WHERE id = $1`, first.RunID).Scan(&extra); err != nil {
		t.Fatal(err)
	}
	if extra != 1 {
		t.Errorf("extra requests %d, want 1 (only the request after the check)", extra)
	}
}
