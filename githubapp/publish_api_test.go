package githubapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/fault"
)

// mustGit runs git in dir for a test, isolated from the machine's configuration.
func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// patchFrom makes a patch on base in a scratch copy of the clone dir: edit changes its working
// tree. It returns the patch (git diff --binary) and the tree git builds from it.
func patchFrom(t *testing.T, dir, base string, edit func(work string)) ([]byte, string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	mustGit(t, "", "clone", "--quiet", dir, work)
	mustGit(t, work, "checkout", "--quiet", base)
	edit(work)
	mustGit(t, work, "add", "-A")
	tree := mustGit(t, work, "write-tree")
	cmd := exec.Command("git", "diff", "--cached", "--binary", "--full-index", base)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	p, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return p, tree
}

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestPublishSignedCommitUnderRuleset is issue 22's first "Done when": a ruleset requires
// signed commits on frognano/* (a push over git is refused), and the run's draft pull request
// still comes: its commit is API-made and verified, its parent the base, co-authored by the
// labeller with their no-reply address, and the labeller is asked to review.
func TestPublishSignedCommitUnderRuleset(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	b.gh.RequireSignedCommits(b.repo, "frognano/*")
	b.gh.SetPermission(b.repo, "alice", "write")
	in.CoAuthor = Person{Login: "alice"}

	// The rule is real: git's push of the same change to a frognano/ branch is refused.
	work := filepath.Join(t.TempDir(), "w")
	mustGit(t, "", "clone", "--quiet", in.Dir, work)
	write(t, filepath.Join(work, "x.txt"), []byte("x\n"), 0o644)
	mustGit(t, work, "add", "-A")
	mustGit(t, work, "commit", "--quiet", "-m", "unsigned")
	push := exec.Command("git", "push", b.repo.Dir, "HEAD:refs/heads/frognano/by-git")
	push.Dir = work
	if out, err := push.CombinedOutput(); err == nil || !strings.Contains(string(out), "Commits must have verified signatures") {
		t.Fatalf("git push under the ruleset: %v\n%s", err, out)
	}

	pub, err := b.client.Publish(context.Background(), in)
	number := pub.Number
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	c := b.gh.Branch(b.repo, in.Branch)
	if c == nil || !c.Verified {
		t.Fatalf("branch commit = %+v, want a verified one", c)
	}
	if len(c.Parents) != 1 || c.Parents[0] != in.BaseSHA {
		t.Errorf("parents = %v, want [%s]", c.Parents, in.BaseSHA)
	}
	// No identity of frognano's own: GitHub made the App's bot the author and signed it.
	if c.AuthorName != "frognano[bot]" || !strings.HasSuffix(c.AuthorEmail, "+frognano[bot]@users.noreply.github.com") || c.CommitterName != "GitHub" {
		t.Errorf("identity = %s <%s> / %s", c.AuthorName, c.AuthorEmail, c.CommitterName)
	}
	trailer := fmt.Sprintf("Co-authored-by: alice <%d+alice@users.noreply.127.0.0.1>", b.gh.UserID("alice"))
	if !strings.HasSuffix(c.Message, "\n\n"+trailer) {
		t.Errorf("commit message does not end with %q:\n%s", trailer, c.Message)
	}
	if got := b.gh.RequestedReviewers(b.repo, number); len(got) != 1 || got[0] != "alice" {
		t.Errorf("requested reviewers = %v, want [alice]", got)
	}
	if prs := b.gh.PRs(b.repo); len(prs) != 1 || !prs[0].Draft {
		t.Errorf("PRs = %+v", prs)
	}
	if n := b.gh.CountRequests("*", "/*/*.git/git-receive-pack"); n != 0 {
		t.Errorf("%d pushes over git, want none", n)
	}
	// A retried job makes no second commit, PR or review request.
	if pub, err := b.client.Publish(context.Background(), in); err != nil || pub.Number != number {
		t.Fatalf("retried Publish = #%d, %v", pub.Number, err)
	}
	if n := b.gh.CountRequests("POST", "/repos/*/*/git/commits"); n != 1 {
		t.Errorf("%d commits made, want 1", n)
	}
	if got := b.gh.RequestedReviewers(b.repo, number); len(got) != 1 {
		t.Errorf("requested reviewers after a retry = %v", got)
	}
}

// TestPublishWithCommitIdentityIsUnsigned: FROGNANO_COMMIT_NAME/EMAIL give the commit an author
// of its own, which GitHub does not sign: under the ruleset the branch update is refused (a
// permanent PushRefusedError that Explain words, naming the settings) and nothing is created;
// without it the commit is the operator's, unverified.
func TestPublishWithCommitIdentityIsUnsigned(t *testing.T) {
	t.Parallel()
	identity := func(c *Config) { c.CommitName, c.CommitEmail = "Release Bot", "bot@example.com" }
	t.Run("UnderRuleset", func(t *testing.T) {
		t.Parallel()
		b := setup(t, identity)
		in := cloneFor(t, b)
		b.gh.RequireSignedCommits(b.repo, "frognano/*")
		_, err := b.client.Publish(context.Background(), in)
		var refused *PushRefusedError
		if !errors.As(err, &refused) || refused.Kind != PushRefusedSignedCommits || fault.IsTransient(err) {
			t.Fatalf("Publish = %v, want a permanent signed-commits refusal", err)
		}
		reason, ok := Explain(err)
		if !ok || !strings.Contains(reason, "Commits must have verified signatures") || !strings.Contains(reason, EnvCommitName) {
			t.Errorf("Explain = %q", reason)
		}
		if br := b.gh.Branch(b.repo, in.Branch); br != nil || len(b.gh.PRs(b.repo)) != 0 {
			t.Errorf("branch %v or a PR exists after the refusal", br)
		}
	})
	t.Run("NoRuleset", func(t *testing.T) {
		t.Parallel()
		b := setup(t, identity)
		in := cloneFor(t, b)
		if _, err := b.client.Publish(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		c := b.gh.Branch(b.repo, in.Branch)
		if c.Verified || c.AuthorName != "Release Bot" || c.AuthorEmail != "bot@example.com" || c.CommitterEmail != "bot@example.com" {
			t.Errorf("commit = %+v, want the operator's unverified identity", c)
		}
	})
}

// cloneFor clones b's repository and returns issue 12's PublishInput.
func cloneFor(t *testing.T, b *bundle) PublishInput {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	head, branch, err := b.client.Clone(context.Background(), dir)
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	return PublishInput{Dir: dir, BaseSHA: head, Branch: "frognano/issue-12", BaseBranch: branch,
		Title: "Fix Add", Body: "Closes #12.", Patch: []byte(fixPatch), IssueNumber: 12}
}

// TestPublishEverythingAPatchMayHold is the second "Done when": a patch with a symlink inside
// the repository, an executable script (new, and a file made executable), a deleted file, a
// binary file, an empty file, a rename and a change arrives intact: the pushed commit's tree is
// the tree frognano built and tested, object for object.
func TestPublishEverythingAPatchMayHold(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	repo := gh.AddRepo(testOwner, testRepo, map[string]string{
		"README.md": "# hello\n", "calc/add.go": testFiles["calc/add.go"], "old.txt": "going away\n",
		"tools/run.sh": "#!/bin/sh\necho run\n", "docs/guide.md": "a guide\n",
	})
	gh.AddInstallation(testInstallation, repo)
	b := &bundle{gh: gh, repo: repo, clock: newClock(), logs: &syncBuffer{}}
	app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, Now: b.clock.Now, Sleep: b.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if b.client, err = app.ForRepo(context.Background(), testInstallation, testOwner, testRepo); err != nil {
		t.Fatal(err)
	}
	in := cloneFor(t, b)
	binary := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe, 1, 2, 3, 0, 0x80}
	big := bytes.Repeat([]byte("0123456789abcdef\x00"), 40<<10) // binary, ~700 KB
	in.Patch, _ = patchFrom(t, in.Dir, in.BaseSHA, func(w string) {
		write(t, filepath.Join(w, "scripts/fix.sh"), []byte("#!/bin/sh\necho fixed\n"), 0o755)
		if err := os.Chmod(filepath.Join(w, "tools/run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(w, "old.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../docs/guide.md", filepath.Join(w, "calc", "GUIDE")); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(w, "assets/logo.png"), binary, 0o644)
		write(t, filepath.Join(w, "assets/big.bin"), big, 0o644)
		write(t, filepath.Join(w, "calc/empty.go"), nil, 0o644)
		write(t, filepath.Join(w, "calc/add.go"), []byte(strings.ReplaceAll(testFiles["calc/add.go"], "a - b", "a + b")), 0o644)
		if err := os.Rename(filepath.Join(w, "README.md"), filepath.Join(w, "README")); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(w, "unicode/ünï.txt"), []byte("crlf\r\nline\r\n"), 0o644)
	})
	// The tree frognano tests is the one git builds from the patch on the host.
	tested := treeOfPatch(t, in.Dir, in.BaseSHA, in.Patch)

	if _, err := b.client.Publish(context.Background(), in); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	c := gh.Branch(repo, in.Branch)
	if c == nil || c.Tree != tested {
		t.Fatalf("the pushed commit's tree is %v, want the tested tree %s", c, tested)
	}
	lsTree := mustGit(t, repo.Dir, "ls-tree", "-r", c.SHA)
	for _, want := range []string{"100755 blob", "\tscripts/fix.sh", "120000 blob"} {
		if !strings.Contains(lsTree, want) {
			t.Errorf("ls-tree lacks %q:\n%s", want, lsTree)
		}
	}
	if got := mustGit(t, repo.Dir, "cat-file", "-p", c.SHA+":calc/GUIDE"); got != "../docs/guide.md" {
		t.Errorf("symlink target = %q", got)
	}
	if got := c.Files["assets/logo.png"]; got != string(binary) {
		t.Errorf("binary file = %q", got)
	}
	if _, ok := c.Files["old.txt"]; ok {
		t.Error("old.txt was not deleted")
	}
	if got, ok := c.Files["calc/empty.go"]; !ok || got != "" {
		t.Errorf("empty file = %q, %v", got, ok)
	}
	// The binary files went as blobs; the text in the tree request.
	if n := gh.CountRequests("POST", "/repos/*/*/git/blobs"); n != 2 {
		t.Errorf("%d blobs created, want 2 (the binary files)", n)
	}
	if n := gh.CountRequests("POST", "/repos/*/*/git/trees"); n != 1 {
		t.Errorf("%d trees created, want 1", n)
	}
}

// treeOfPatch is the tree git builds applying patch on base in dir, as Publish does.
func treeOfPatch(t *testing.T, dir, base string, patch []byte) string {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	run := func(stdin []byte, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(nil, "read-tree", base)
	run(patch, "apply", "--cached", "--binary", "-")
	return run(nil, "write-tree")
}

// TestPublishManyFiles: a 200-file patch works and costs one tree request (no blob requests:
// text travels in the tree request); more text than one request carries goes as blobs.
func TestPublishManyFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		size  int
		blobs int
	}{
		{"Small", 100, 0},
		// 200 files of 40 KB: 8 MB of text, twice what one tree request carries.
		{"BeyondOneRequest", 40 << 10, 200 - (maxInlineTotal / (40 << 10))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, in := cloned(t)
			in.Patch, _ = patchFrom(t, in.Dir, in.BaseSHA, func(w string) {
				for i := range 200 {
					line := fmt.Sprintf("file %d\n", i)
					write(t, filepath.Join(w, "gen", fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat(line, tc.size/len(line)+1)), 0o644)
				}
			})
			tested := treeOfPatch(t, in.Dir, in.BaseSHA, in.Patch)
			if _, err := b.client.Publish(context.Background(), in); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if c := b.gh.Branch(b.repo, in.Branch); c == nil || c.Tree != tested || len(c.Files) != 202 {
				t.Fatalf("branch commit = %v, want tree %s with 202 files", c, tested)
			}
			if n := b.gh.CountRequests("POST", "/repos/*/*/git/blobs"); n != tc.blobs {
				t.Errorf("%d blobs created, want %d", n, tc.blobs)
			}
		})
	}
}

// TestFollowUpFastForwards: a follow-up's commit goes on the branch's head, without force; when
// someone else's commit lands in between, Publish returns ErrBranchMoved and changes nothing.
func TestFollowUpFastForwards(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	if _, err := b.client.Publish(ctx, in); err != nil {
		t.Fatal(err)
	}
	first := b.gh.Branch(b.repo, in.Branch)
	follow := func() PublishInput {
		dir := filepath.Join(t.TempDir(), "clone")
		head, _, err := b.client.CloneBranch(ctx, dir, in.Branch, in.BaseBranch)
		if err != nil {
			t.Fatal(err)
		}
		return PublishInput{Dir: dir, BaseSHA: head, Branch: in.Branch, BaseBranch: in.BaseBranch, Title: in.Title, Body: "again",
			Patch: []byte(testPatch), IssueNumber: 12, FastForward: true, PullRequest: b.gh.PRs(b.repo)[0].Number}
	}
	f := follow()
	if _, err := b.client.Publish(ctx, f); err != nil {
		t.Fatalf("follow-up Publish: %v", err)
	}
	second := b.gh.Branch(b.repo, in.Branch)
	if len(second.Parents) != 1 || second.Parents[0] != first.SHA || !second.Verified {
		t.Errorf("follow-up commit parents %v (verified %v), want [%s]", second.Parents, second.Verified, first.SHA)
	}
	if n := b.gh.CountRequests("PATCH", "/repos/*/*/git/refs/heads/frognano/issue-12"); n != 1 {
		t.Errorf("%d ref updates, want 1", n)
	}

	f = follow()
	f.Patch = []byte(strings.ReplaceAll(testPatch, "add_test.go", "mul_test.go"))
	theirs := b.gh.PushCommit(b.repo, in.Branch, "THEIRS.md", "a reviewer's commit\n", "Reviewer")
	commitsBefore := b.gh.CountRequests("POST", "/repos/*/*/git/commits")
	_, err := b.client.Publish(ctx, f)
	if !errors.Is(err, ErrBranchMoved) || fault.IsTransient(err) {
		t.Fatalf("Publish after someone pushed: %v, want a permanent ErrBranchMoved", err)
	}
	if now := b.gh.Branch(b.repo, in.Branch); now.SHA != theirs {
		t.Errorf("branch at %s, want their commit %s", now.SHA, theirs)
	}
	if n := b.gh.CountRequests("POST", "/repos/*/*/git/commits"); n != commitsBefore {
		t.Errorf("%d commits were made after the branch moved", n-commitsBefore)
	}
}

// TestPublishRetryAfterCrash: a job killed between making the commit and moving the branch, or
// between moving the branch and opening the pull request, ends, when retried, with one commit
// on the branch and one pull request.
func TestPublishRetryAfterCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		inject  func(b *bundle)
		commits int // commits made over both attempts
	}{
		{"BetweenCommitAndRef", func(b *bundle) { b.gh.FailNext("POST", "/repos/*/*/git/refs", http.StatusBadGateway, nil, 1) }, 2},
		{"RefMovedAnswerLost", func(b *bundle) { b.gh.LoseNextResponse("POST", "/repos/*/*/git/refs", http.StatusBadGateway, 1) }, 1},
		{"BetweenRefAndPR", func(b *bundle) {
			b.gh.FailNext("POST", "/repos/*/*/pulls", http.StatusUnprocessableEntity, nil, 1)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, in := cloned(t)
			tc.inject(b)
			if _, err := b.client.Publish(context.Background(), in); err == nil {
				t.Fatal("the first attempt succeeded despite the failure")
			}
			pub, err := b.client.Publish(context.Background(), in)
			number := pub.Number
			if err != nil {
				t.Fatalf("retried Publish: %v", err)
			}
			c := b.gh.Branch(b.repo, in.Branch)
			if c == nil || len(c.Parents) != 1 || c.Parents[0] != in.BaseSHA || !c.Verified {
				t.Fatalf("branch = %+v, want one verified commit on the base", c)
			}
			if prs := b.gh.PRs(b.repo); len(prs) != 1 || prs[0].Number != number {
				t.Errorf("PRs = %+v, want one", prs)
			}
			if n := b.gh.CountRequests("POST", "/repos/*/*/git/commits"); n != tc.commits {
				t.Errorf("%d commits made, want %d", n, tc.commits)
			}
		})
	}
}

// TestPublishReviewRequestRefused: GitHub refuses (422) a reviewer without access to the
// repository; the pull request is published all the same and the refusal logged. The App's own
// bot (the PR's author) is never asked.
func TestPublishReviewRequestRefused(t *testing.T) {
	t.Parallel()
	t.Run("NoAccess", func(t *testing.T) {
		t.Parallel()
		b, in := cloned(t)
		b.gh.UserID("mallory") // a GitHub user without access to the repository
		in.CoAuthor = Person{Login: "mallory"}
		pub, err := b.client.Publish(context.Background(), in)
		number := pub.Number
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
		if got := b.gh.RequestedReviewers(b.repo, number); len(got) != 0 {
			t.Errorf("reviewers = %v", got)
		}
		if n := b.gh.CountRequests("POST", "/repos/*/*/pulls/*/requested_reviewers"); n != 1 {
			t.Errorf("%d review requests, want the one GitHub refused", n)
		}
		if !strings.Contains(b.logs.String(), "could not ask for a review") || !strings.Contains(b.logs.String(), "422") {
			t.Errorf("the refusal is not logged:\n%s", b.logs.String())
		}
		if c := b.gh.Branch(b.repo, in.Branch); !strings.Contains(c.Message, "Co-authored-by: mallory <") {
			t.Errorf("the commit does not credit who asked:\n%s", c.Message)
		}
	})
	t.Run("AuthorOrBot", func(t *testing.T) {
		t.Parallel()
		b, in := cloned(t)
		in.CoAuthor = Person{Login: "frognano[bot]"}
		if _, err := b.client.Publish(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if n := b.gh.CountRequests("POST", "/repos/*/*/pulls/*/requested_reviewers"); n != 0 {
			t.Errorf("%d review requests for the bot", n)
		}
		if c := b.gh.Branch(b.repo, in.Branch); strings.Contains(c.Message, "Co-authored-by") {
			t.Errorf("a bot is credited:\n%s", c.Message)
		}
	})
	t.Run("UnknownUser", func(t *testing.T) {
		t.Parallel()
		b, in := cloned(t)
		in.CoAuthor = Person{Login: "ghost-user"} // GET /users/ghost-user answers 404
		if _, err := b.client.Publish(context.Background(), in); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		if c := b.gh.Branch(b.repo, in.Branch); strings.Contains(c.Message, "Co-authored-by") {
			t.Errorf("credited without an id:\n%s", c.Message)
		}
	})
}

// TestPublishRefusesAnotherTree: when GitHub's tree is not the tree frognano tested, nothing
// is committed and the branch is not made.
func TestPublishRefusesAnotherTree(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	other := `{"sha":"` + strings.Repeat("ab", 20) + `","url":"x","tree":[],"truncated":false}`
	b.gh.RespondNext("POST", "/repos/*/*/git/trees", http.StatusCreated, other, 2)
	_, err := b.client.Publish(context.Background(), in)
	if err == nil || fault.IsTransient(err) || !strings.Contains(err.Error(), "not the tree") {
		t.Fatalf("Publish = %v, want a permanent refusal naming the trees", err)
	}
	if br := b.gh.Branch(b.repo, in.Branch); br != nil || b.gh.CountRequests("POST", "/repos/*/*/git/commits") != 0 {
		t.Errorf("a commit or branch was made: %v", br)
	}
}

// TestTreeChangesRefusesFilesPastGitHubsLimit: a file over 100 MB is refused before anything is
// written, with a message that names it and the limit.
func TestTreeChangesRefusesFilesPastGitHubsLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet")
	base := mustGit(t, dir, "mktree")
	f := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(f, make([]byte, MaxBlobSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := mustGit(t, dir, "hash-object", "-w", f)
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader("100644 blob "+blob+"\thuge.bin\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	_, err = treeChanges(context.Background(), dir, base, strings.TrimSpace(string(out)))
	if err == nil || fault.IsTransient(err) || !strings.Contains(err.Error(), `"huge.bin"`) || !strings.Contains(err.Error(), "100 MB") {
		t.Fatalf("treeChanges = %v, want a permanent error naming the file and the limit", err)
	}
}

func FuzzParseRawDiff(f *testing.F) {
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	f.Add([]byte(":100644 100755 " + a + " " + a + " M\x00run.sh\x00"))
	f.Add([]byte(":100644 000000 " + a + " " + z + " D\x00old.txt\x00:000000 120000 " + z + " " + a + " A\x00link\x00"))
	f.Add([]byte(":100644 100644 x y M\x00"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		changes, err := parseRawDiff(raw)
		if err != nil {
			return
		}
		for _, c := range changes {
			if c.path == "" || !validMode(c.mode) || (!c.deleted && !shaPattern.MatchString(c.sha)) {
				t.Fatalf("accepted %+v from %q", c, raw)
			}
		}
	})
}
