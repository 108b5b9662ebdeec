package githubapp

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

// TestPublishReportsCheckRun: with checks: write, the check run lands on the pushed commit,
// completed, with its output redacted; without it, no Checks API request is made.
func TestPublishReportsCheckRun(t *testing.T) {
	t.Parallel()
	for _, checks := range []bool{true, false} {
		b := setup(t, func(c *Config) { c.ChecksWrite = checks })
		dir := filepath.Join(t.TempDir(), "clone")
		head, branch, err := b.client.Clone(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		secret := "ghp_" + strings.Repeat("a", 36)
		in := PublishInput{Dir: dir, BaseSHA: head, Branch: "frognano/issue-12", BaseBranch: branch,
			Title: "Fix Add", Body: "b", Patch: []byte(fixPatch), IssueNumber: 12,
			Check: &CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "failure", Title: "1 broken",
				Summary: "| a | b |", Text: "token " + secret, ExternalID: "7",
				StartedAt: time.Unix(1700000000, 0), CompletedAt: time.Unix(1700000100, 0)}}
		if _, err := b.client.Publish(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		runs := b.gh.CheckRuns(b.repo)
		if !checks {
			if len(runs) != 0 || b.gh.CountRequests("POST", "/repos/{owner}/{repo}/check-runs") != 0 {
				t.Errorf("check run reported without the permission: %v", runs)
			}
			continue
		}
		if len(runs) != 1 {
			t.Fatalf("check runs = %v, want 1", runs)
		}
		r := runs[0]
		tip := b.gh.Branch(b.repo, "frognano/issue-12")
		out, _ := r["output"].(map[string]any)
		if r["head_sha"] != tip.SHA || r["name"] != "frognano / tests" || r["status"] != "completed" || r["conclusion"] != "failure" ||
			r["started_at"] != "2023-11-14T22:13:20Z" || r["external_id"] != "7" || out["title"] != "1 broken" {
			t.Errorf("check run = %v, want it on %s", r, tip.SHA)
		}
		if text, _ := out["text"].(string); strings.Contains(text, secret) || !strings.Contains(text, "token ") {
			t.Errorf("text %q: the token is not redacted", text)
		}
	}
}

// TestPublishFastForwardNeverOverwrites: a follow-up commit goes on top of the branch's head;
// when a reviewer pushed meanwhile, the push is refused with ErrBranchMoved and their commit
// stays.
func TestPublishFastForwardNeverOverwrites(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	pub, err := b.client.Publish(ctx, in)
	number := pub.Number
	if err != nil {
		t.Fatal(err)
	}
	first := b.gh.Branch(b.repo, in.Branch)
	pr, err := b.client.PullRequest(ctx, number)
	if err != nil || pr.HeadRef != in.Branch || pr.HeadRepo != testOwner+"/"+testRepo || pr.HeadRepoID != b.repo.ID || pr.HeadSHA != first.SHA ||
		pr.BaseRef != in.BaseBranch || pr.State != "open" || pr.Body != in.Body {
		t.Fatalf("PullRequest = %+v, %v", pr, err)
	}

	follow := func() (PublishInput, string) {
		dir := filepath.Join(t.TempDir(), "clone")
		head, base, err := b.client.CloneBranch(ctx, dir, in.Branch, in.BaseBranch)
		if err != nil {
			t.Fatal(err)
		}
		if base != in.BaseSHA {
			t.Fatalf("CloneBranch base %s, want %s", base, in.BaseSHA)
		}
		return PublishInput{Dir: dir, BaseSHA: head, Branch: in.Branch, BaseBranch: in.BaseBranch, Title: in.Title, Body: "again",
			Patch: []byte(testPatch), IssueNumber: 12, FastForward: true}, head
	}
	f, head := follow()
	if head != first.SHA {
		t.Fatalf("CloneBranch head %s, want %s", head, first.SHA)
	}
	if _, err := b.client.Publish(ctx, f); err != nil {
		t.Fatalf("fast-forward Publish: %v", err)
	}
	second := b.gh.Branch(b.repo, in.Branch)
	if len(second.Parents) != 1 || second.Parents[0] != first.SHA || second.Files["calc/add_test.go"] == "" {
		t.Fatalf("follow-up commit %+v is not on top of %s", second, first.SHA)
	}

	f, _ = follow()
	reviewer := b.gh.PushCommit(b.repo, in.Branch, "NOTES.md", "mine\n", "Reviewer's commit")
	f.Patch = []byte(strings.ReplaceAll(testPatch, "add_test.go", "sub_test.go"))
	f.BaseSHA = second.SHA
	_, err = b.client.Publish(ctx, f)
	if !errors.Is(err, ErrBranchMoved) || fault.IsTransient(err) {
		t.Fatalf("Publish over a moved branch: %v, want a permanent ErrBranchMoved", err)
	}
	if tip := b.gh.Branch(b.repo, in.Branch); tip.SHA != reviewer {
		t.Errorf("the branch is at %s, not the reviewer's %s", tip.SHA, reviewer)
	}
}

// A follow-up publishes to its own pull request only while it is open: once a person closed it
// during the run, nothing is pushed and no second pull request is opened (the branch without
// an open pull request would otherwise get a new one).
func TestPublishFollowUpToAClosedPullRequest(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	pub, err := b.client.Publish(ctx, in)
	number := pub.Number
	if err != nil {
		t.Fatal(err)
	}
	first := b.gh.Branch(b.repo, in.Branch)
	dir := filepath.Join(t.TempDir(), "clone")
	head, _, err := b.client.CloneBranch(ctx, dir, in.Branch, in.BaseBranch)
	if err != nil {
		t.Fatal(err)
	}
	f := PublishInput{Dir: dir, BaseSHA: head, Branch: in.Branch, BaseBranch: in.BaseBranch, Title: in.Title, Body: "again",
		Patch: []byte(testPatch), IssueNumber: 12, FastForward: true, PullRequest: number}
	b.gh.ClosePR(b.repo, number)
	_, err = b.client.Publish(ctx, f)
	if !errors.Is(err, ErrPullRequestClosed) || fault.IsTransient(err) {
		t.Fatalf("Publish to a closed pull request: %v, want a permanent ErrPullRequestClosed", err)
	}
	if tip := b.gh.Branch(b.repo, in.Branch); tip.SHA != first.SHA {
		t.Errorf("the branch moved to %s: something was pushed", tip.SHA)
	}
	if prs := b.gh.PRs(b.repo); len(prs) != 1 {
		t.Errorf("%d pull requests, want the one closed", len(prs))
	}
}
