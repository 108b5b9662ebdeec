package githubapp

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	secretscan "github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/fault"
)

// fakeToken returns a GitHub personal access token's shape made at run time, so frognano's own
// repository holds no value that looks like one.
func fakeToken(t *testing.T) string {
	t.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 36)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			t.Fatal(err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return "ghp" + "_" + string(b)
}

// tokenPatch adds calc/token.go holding tok on its second line.
func tokenPatch(tok string) []byte {
	return []byte("diff --git a/calc/token.go b/calc/token.go\nnew file mode 100644\n--- /dev/null\n+++ b/calc/token.go\n" +
		"@@ -0,0 +1,2 @@\n+package calc\n+const token = \"" + tok + "\"\n")
}

func clonedWith(t *testing.T, mode secretscan.Mode) (*bundle, PublishInput) {
	t.Helper()
	b := setup(t, func(c *Config) { c.Secrets = mode })
	dir := filepath.Join(t.TempDir(), "clone")
	head, branch, err := b.client.Clone(context.Background(), dir)
	if err != nil {
		t.Fatalf("Clone: %v", err)
	}
	return b, PublishInput{
		Dir: dir, BaseSHA: head, Branch: "frognano/issue-12", BaseBranch: branch,
		Title: "Fix Add", Body: "Closes #12.", IssueNumber: 12,
	}
}

// TestPublishRefusesAPatchWithAFoundSecret: whatever the caller checked, Publish scans the
// patch itself; under block a GitHub token in a new file is refused for good, nothing is
// pushed, and the error names rule, file and line, never the value.
func TestPublishRefusesAPatchWithAFoundSecret(t *testing.T) {
	t.Parallel()
	tok := fakeToken(t)
	b, in := clonedWith(t, secretscan.Block)
	in.Patch = tokenPatch(tok)
	_, err := b.client.Publish(context.Background(), in)
	var se *SecretsError
	if !errors.As(err, &se) || fault.IsTransient(err) {
		t.Fatalf("Publish err = %v, want a permanent *SecretsError", err)
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(b.logs.String(), tok) {
		t.Fatal("the token's value is in the error or the logs")
	}
	if !strings.Contains(err.Error(), `github-pat in "calc/token.go" line 2`) {
		t.Errorf("the error does not name the finding: %v", err)
	}
	if br := b.gh.Branch(b.repo, in.Branch); br != nil || len(b.gh.PRs(b.repo)) != 0 {
		t.Errorf("the patch was published: branch %v, %d PRs", br, len(b.gh.PRs(b.repo)))
	}
}

// TestPublishPushesAFoundSecretUnderWarn: FROGNANO_SECRETS=warn publishes the patch as it is.
func TestPublishPushesAFoundSecretUnderWarn(t *testing.T) {
	t.Parallel()
	b, in := clonedWith(t, secretscan.Warn)
	in.Patch = tokenPatch(fakeToken(t))
	if _, err := b.client.Publish(context.Background(), in); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if len(b.gh.PRs(b.repo)) != 1 {
		t.Errorf("no pull request was opened")
	}
}

// TestPublishRefusesWhatAGitleaksAllowListSkipped: Publish's own check is the runner's whole
// scan (issue 28): a token at a path that gitleaks' github-pat rule allow-lists for itself
// (the @octokit/auth-token README) is refused, though gitleaks alone would skip it.
func TestPublishRefusesWhatAGitleaksAllowListSkipped(t *testing.T) {
	t.Parallel()
	tok := fakeToken(t)
	b, in := clonedWith(t, secretscan.Block)
	in.Patch = []byte("diff --git a/@octokit/auth-token/README.md b/@octokit/auth-token/README.md\nnew file mode 100644\n" +
		"--- /dev/null\n+++ b/@octokit/auth-token/README.md\n@@ -0,0 +1 @@\n+GITHUB=" + tok + "\n")
	_, err := b.client.Publish(context.Background(), in)
	var se *SecretsError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `github-pat in "@octokit/auth-token/README.md" line 1`) {
		t.Fatalf("Publish err = %v, want a *SecretsError naming the finding", err)
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(b.logs.String(), tok) {
		t.Fatal("the token's value is in the error or the logs")
	}
	if br := b.gh.Branch(b.repo, in.Branch); br != nil || len(b.gh.PRs(b.repo)) != 0 {
		t.Errorf("the patch was published: branch %v, %d PRs", br, len(b.gh.PRs(b.repo)))
	}
}

// TestPublishRefusesASecretInAPath: a path is published as it is (the commit's tree), so
// Publish's own scan reads the names of the files the patch adds, not only their bytes: a
// GitHub token spelled as a file name is refused under block, and the error names the file
// with the value replaced.
func TestPublishRefusesASecretInAPath(t *testing.T) {
	t.Parallel()
	tok := fakeToken(t)
	b, in := clonedWith(t, secretscan.Block)
	path := "calc/" + tok
	in.Patch = []byte("diff --git a/" + path + " b/" + path + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + path + "\n" +
		"@@ -0,0 +1 @@\n+harmless\n")
	_, err := b.client.Publish(context.Background(), in)
	var se *SecretsError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `github-pat in "calc/[secret: github-pat]" its name`) {
		t.Fatalf("Publish err = %v, want a *SecretsError naming the finding in the file's name", err)
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(b.logs.String(), tok) {
		t.Fatal("the token's value is in the error or the logs")
	}
	if br := b.gh.Branch(b.repo, in.Branch); br != nil || len(b.gh.PRs(b.repo)) != 0 {
		t.Errorf("the patch was published: branch %v, %d PRs", br, len(b.gh.PRs(b.repo)))
	}
}
