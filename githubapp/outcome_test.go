package githubapp

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestOutcomeCallsAgainstTheFake: what package outcome asks of a published pull request,
// through the real client and the fake GitHub: its state as it moves (people's commit, merge),
// the lines people changed on the files the patch touched (git on the host), the merged
// pull request that replaced a closed one, and Gone for a pull request or a repository that is
// not there.
func TestOutcomeCallsAgainstTheFake(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	pub, err := b.client.Publish(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Head != b.gh.Branch(b.repo, in.Branch).SHA || pub.Commits != 1 {
		t.Fatalf("Published = %+v, want the branch's head and 1 commit", pub)
	}
	st, err := b.client.PullState(ctx, pub.Number)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "open" || st.Merged || !st.Draft || st.HeadSHA != pub.Head || st.Commits != 1 || st.RateRemaining != -1 {
		t.Errorf("PullState before = %+v", st)
	}
	fixed := b.gh.Branch(b.repo, in.Branch).Files["calc/add.go"]
	b.gh.PushCommit(b.repo, in.Branch, "calc/add.go", fixed+"\n// Sub is next.\n", "Note")
	b.gh.PushCommit(b.repo, in.Branch, "README.md", "# bye\n", "Readme")
	b.gh.SetRateRemaining(4000)
	merge := b.gh.MergePR(b.repo, pub.Number, "dave")
	st, err = b.client.PullState(ctx, pub.Number)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "closed" || !st.Merged || st.MergedBy != "dave" || st.MergeSHA != merge || st.Commits != 3 ||
		st.MergedAt.IsZero() || st.RateRemaining <= 0 || st.RateRemaining >= 4000 {
		t.Errorf("PullState after the merge = %+v", st)
	}
	lines, err := b.client.PeopleLines(ctx, t.TempDir(), pub.Number, pub.Head, st.HeadSHA, []string{"calc/add.go", "calc/add_test.go"}, time.Now()) // shallow: since the pull request opened
	if err != nil {
		t.Fatal(err)
	}
	if lines != 2 { // a blank line and the comment, on the patch's file; README.md is not counted
		t.Errorf("PeopleLines = %d, want 2", lines)
	}
	// frognano's head force-pushed away: the fetch does not bring it, and the error says so
	// (the lines stay unknown; nothing to retry).
	gone := "1111111111111111111111111111111111111111"
	if _, err := b.client.PeopleLines(ctx, t.TempDir(), pub.Number, gone, st.HeadSHA, []string{"calc/add.go"}, time.Time{}); !errors.Is(err, ErrNotFetched) {
		t.Errorf("PeopleLines from a commit the fetch did not bring = %v, want ErrNotFetched", err)
	}
	if _, err := b.client.PeopleLines(ctx, t.TempDir(), pub.Number, pub.Head, "--output=/tmp/x", nil, time.Time{}); err == nil {
		t.Error("PeopleLines took an option for a commit id")
	}

	// A person's merged pull request that GitHub links to the issue replaced frognano's.
	b.gh.PushCommit(b.repo, "main", "calc/other.go", "package calc\n", "Other")
	theirs := b.gh.OpenPersonPR(b.repo, in.Branch, "erin", "My own fix") // any branch will do for the link
	b.gh.CrossReference(b.repo, 12, pub.Number)                          // frognano's own: a bot's, never a replacement
	if n, err := b.client.MergedReplacement(ctx, 12, time.Time{}); err != nil || n != 0 {
		t.Errorf("MergedReplacement with only frognano's own = %d, %v; want 0", n, err)
	}
	b.gh.CrossReference(b.repo, 12, theirs)
	if n, err := b.client.MergedReplacement(ctx, 12, time.Time{}); err != nil || n != 0 {
		t.Errorf("MergedReplacement before theirs is merged = %d, %v; want 0", n, err)
	}
	b.gh.MergePR(b.repo, theirs, "erin")
	if n, err := b.client.MergedReplacement(ctx, 12, time.Time{}); err != nil || n != theirs {
		t.Errorf("MergedReplacement = %d, %v; want #%d", n, err, theirs)
	}

	if _, err := b.client.PullState(ctx, 999); !Gone(err) {
		t.Errorf("PullState of no pull request: %v, want Gone", err)
	}
	if Gone(&TokenRefusedError{Status: http.StatusUnprocessableEntity, Message: "Validation Failed"}) {
		t.Error("Gone holds for a token refused for another reason")
	}
	b.gh.DeleteRepo(b.repo)
	if _, err := b.app.ForRepository(ctx, testInstallation, b.repo.ID, testOwner, testRepo); !Gone(err) {
		t.Errorf("ForRepository of a deleted repository: %v, want Gone", err)
	}
}
