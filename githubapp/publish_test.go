package githubapp

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/fault"
)

const fixPatch = `diff --git a/calc/add.go b/calc/add.go
--- a/calc/add.go
+++ b/calc/add.go
@@ -1,3 +1,3 @@
 package calc
 
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
`

const testPatch = `diff --git a/calc/add_test.go b/calc/add_test.go
new file mode 100644
--- /dev/null
+++ b/calc/add_test.go
@@ -0,0 +1 @@
+package calc
`

// cloned returns a bundle with a fresh clone and a PublishInput for issue 12; edit changes
// the App's Config as setup's do.
func cloned(t *testing.T, edit ...func(*Config)) (*bundle, PublishInput) {
	t.Helper()
	b := setup(t, edit...)
	dir := filepath.Join(t.TempDir(), "clone")
	head, branch, err := b.client.Clone(context.Background(), dir)
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	return b, PublishInput{
		Dir: dir, BaseSHA: head, Branch: "frognano/issue-12", BaseBranch: branch,
		Title: "Fix Add", Body: "Closes #12.", Patch: []byte(fixPatch), IssueNumber: 12,
	}
}

func TestPublishCreatesThenUpdatesOneDraft(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()

	pub, err := b.client.Publish(ctx, in)
	url, number := pub.URL, pub.Number
	if err != nil {
		t.Fatalf("first Publish: %v", err)
	}
	prs := b.gh.PRs(b.repo)
	if len(prs) != 1 {
		t.Fatalf("PRs = %+v, want 1", prs)
	}
	pr := prs[0]
	if !pr.Draft || pr.Head != in.Branch || pr.Base != "main" || pr.Title != "Fix Add" || pr.HTMLURL != url || pr.Number != number || pr.MaintainerCanModify {
		t.Errorf("PR = %+v; url %s number %d", pr, url, number)
	}
	first := b.gh.Branch(b.repo, in.Branch)
	if first == nil {
		t.Fatal("branch was not pushed")
	}
	if len(first.Parents) != 1 || first.Parents[0] != in.BaseSHA {
		t.Errorf("commit parents = %v, want [%s]", first.Parents, in.BaseSHA)
	}
	// No identity of frognano's own: GitHub makes the App's bot the author and signs it.
	if first.AuthorName != "frognano[bot]" || !strings.HasSuffix(first.AuthorEmail, "+frognano[bot]@users.noreply.github.com") || !first.Verified {
		t.Errorf("commit identity = %s <%s> / %s, verified %v", first.AuthorName, first.AuthorEmail, first.CommitterName, first.Verified)
	}
	if !strings.Contains(first.Message, "#12") {
		t.Errorf("commit message %q does not name the issue", first.Message)
	}
	if got := first.Files["calc/add.go"]; !strings.Contains(got, "a + b") {
		t.Errorf("pushed calc/add.go = %q", got)
	}

	// A second run (new patch, new title) replaces the branch's commit and updates the same PR.
	in.Patch = []byte(fixPatch + testPatch)
	in.Title = "Fix Add and test it"
	pub2, err := b.client.Publish(ctx, in)
	url2, number2 := pub2.URL, pub2.Number
	if err != nil {
		t.Fatalf("second Publish: %v", err)
	}
	prs = b.gh.PRs(b.repo)
	if len(prs) != 1 || number2 != number || url2 != url || prs[0].Title != in.Title || !prs[0].Draft || prs[0].Edits != 1 {
		t.Errorf("after second Publish PRs = %+v (number %d)", prs, number2)
	}
	second := b.gh.Branch(b.repo, in.Branch)
	if second.SHA == first.SHA || second.Parents[0] != in.BaseSHA {
		t.Errorf("branch was not replaced from the base: %s (parent %v), first %s", second.SHA, second.Parents, first.SHA)
	}
	if _, ok := second.Files["calc/add_test.go"]; !ok {
		t.Errorf("second commit lacks calc/add_test.go: %v", second.Files)
	}
	// The clone itself was not touched: Publish builds the commit in a temporary index.
	if out, err := hostGit(t, in.Dir, "status", "--porcelain"); err != nil || out != "" {
		t.Errorf("clone is not clean after Publish: %q, %v", out, err)
	}
	if head, _ := hostGit(t, in.Dir, "rev-parse", "HEAD"); head != in.BaseSHA {
		t.Errorf("clone HEAD moved to %s", head)
	}
}

func TestPublishRetryNeverOpensSecondPR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		inject func(b *bundle)
	}{
		{"GatewayErrorBeforeCreate", func(b *bundle) { b.gh.FailNext("POST", "/repos/*/*/pulls", http.StatusBadGateway, nil, 1) }},
		{"CreatedButAnswerLost", func(b *bundle) { b.gh.LoseNextResponse("POST", "/repos/*/*/pulls", http.StatusBadGateway, 1) }},
		{"CreatedButAnswerLostTwice", func(b *bundle) { b.gh.LoseNextResponse("POST", "/repos/*/*/pulls", http.StatusServiceUnavailable, 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, in := cloned(t)
			tt.inject(b)
			pub, err := b.client.Publish(context.Background(), in)
			number := pub.Number
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if prs := b.gh.PRs(b.repo); len(prs) != 1 || prs[0].Number != number || !prs[0].Draft {
				t.Errorf("PRs = %+v, want exactly one draft #%d", prs, number)
			}
			// And a whole retried job after that still finds the same PR.
			if pub, err := b.client.Publish(context.Background(), in); err != nil || pub.Number != number {
				t.Errorf("retried Publish = #%d, %v; want #%d", pub.Number, err, number)
			}
			if n := len(b.gh.PRs(b.repo)); n != 1 {
				t.Errorf("after a retried job there are %d PRs", n)
			}
		})
	}
}

func TestPublishExistingPRFromAnotherRun(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	if _, err := b.client.Publish(ctx, in); err != nil {
		t.Fatal(err)
	}
	// Another run created the PR after this one listed (a stale, empty list), so the create
	// answers 422 "A pull request already exists": Publish must find and update that PR.
	b.gh.RespondNext("GET", "/repos/*/*/pulls", http.StatusOK, "[]", 1)
	in.Title = "Updated by the second run"
	pub, err := b.client.Publish(ctx, in)
	number := pub.Number
	prs := b.gh.PRs(b.repo)
	if err != nil || len(prs) != 1 || number != prs[0].Number || prs[0].Title != in.Title {
		t.Errorf("Publish = #%d, %v; PRs %+v", number, err, prs)
	}
	if n := b.gh.CountRequests("POST", "/repos/*/*/pulls"); n != 2 {
		t.Errorf("POST /pulls sent %d times, want 2 (one per run)", n)
	}
}

func TestPublishRejectsBadInput(t *testing.T) {
	t.Parallel()
	b, good := cloned(t)
	tests := []struct {
		name string
		edit func(*PublishInput)
	}{
		{"BranchIsBase", func(in *PublishInput) { in.Branch = in.BaseBranch }},
		{"BranchLooksLikeOption", func(in *PublishInput) { in.Branch = "--force" }},
		{"BranchWithDotDot", func(in *PublishInput) { in.Branch = "a..b" }},
		{"ShortSHA", func(in *PublishInput) { in.BaseSHA = in.BaseSHA[:7] }},
		{"EmptyPatch", func(in *PublishInput) { in.Patch = nil }},
		{"EmptyTitle", func(in *PublishInput) { in.Title = " " }},
		{"PatchDoesNotApply", func(in *PublishInput) { in.Patch = []byte(strings.ReplaceAll(fixPatch, "a - b", "a * b")) }},
		{"PatchIsGarbage", func(in *PublishInput) { in.Patch = []byte("not a patch\n") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := good
			tt.edit(&in)
			_, err := b.client.Publish(context.Background(), in)
			if err == nil {
				t.Fatal("Publish succeeded")
			}
			if fault.IsTransient(err) {
				t.Errorf("IsTransient(%v) = true, want false", err)
			}
		})
	}
	if n := len(b.gh.PRs(b.repo)); n != 0 {
		t.Errorf("%d PRs were created from bad input", n)
	}
}

func TestPublishRedactsSecrets(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	tok := b.gh.IssuedTokens()[0]
	in.Title = "Fix " + tok
	in.Body = "env: GITHUB_TOKEN=" + tok
	in.CommitMessage = "leak " + tok
	if _, err := b.client.Publish(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	pr := b.gh.PRs(b.repo)[0]
	commit := b.gh.Branch(b.repo, in.Branch)
	for _, s := range []string{pr.Title, pr.Body, commit.Message} {
		if strings.Contains(s, tok) || !strings.Contains(s, Redacted) {
			t.Errorf("not redacted: %q", s)
		}
	}
}

// TestPublishRefusesWhatTheTreeReveals: diffs whose text claims a plain file change, where git
// apply takes the mode from the base tree. The tree git builds is checked before anything is
// pushed, so neither an escaping symlink nor a workflow change reaches a branch or a PR (the
// fake GitHub fails the test on any request, and no token is even asked for).
func TestPublishRefusesWhatTheTreeReveals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch, reason string
	}{
		{"RetargetSymlinkWithoutMode", "diff --git a/CONTRIBUTING b/CONTRIBUTING\nindex 1111111..2222222\n" +
			"--- a/CONTRIBUTING\n+++ b/CONTRIBUTING\n@@ -1 +1 @@\n-docs/CONTRIBUTING.md\n\\ No newline at end of file\n" +
			"+../../../../../../../../etc/passwd\n\\ No newline at end of file\n", "symlink escapes the repository"},
		{"WorkflowWithoutMode", "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nindex 1111111..2222222\n" +
			"--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-on: push\n+on: pull_request_target\n", "workflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := githubtest.New(t)
			repo := gh.AddRepo(testOwner, testRepo, map[string]string{
				"CONTRIBUTING": githubtest.SymlinkPrefix + "docs/CONTRIBUTING.md", "docs/CONTRIBUTING.md": "Be kind.\n",
				".github/workflows/ci.yml": "on: push\n",
			})
			gh.AddInstallation(testInstallation, repo)
			app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL})
			if err != nil {
				t.Fatal(err)
			}
			client, err := app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "clone")
			head, branch, err := client.Clone(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = client.Publish(context.Background(), PublishInput{
				Dir: dir, BaseSHA: head, Branch: "frognano/issue-12", BaseBranch: branch,
				Title: "Fix", Body: "x", Patch: []byte(tt.patch), IssueNumber: 12,
			})
			if err == nil || !strings.Contains(err.Error(), tt.reason) || fault.IsTransient(err) {
				t.Fatalf("Publish err = %v, want a permanent refusal naming %q", err, tt.reason)
			}
			if b := gh.Branch(repo, "frognano/issue-12"); b != nil {
				t.Errorf("a branch was pushed: %+v", b)
			}
			if prs := gh.PRs(repo); len(prs) != 0 {
				t.Errorf("PRs = %+v, want none", prs)
			}
		})
	}
}
