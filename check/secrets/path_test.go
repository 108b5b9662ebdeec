package secrets

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/secrettest"
)

// A path is published as it is (the tree, the pull request's list of files): a value gitleaks'
// rules find in the name of a file or folder the patch adds or renames to is the patch's, and
// refuses it, while the bytes of the file hold nothing. The finding names the file with the
// value replaced, at line 0 ("its name"); no finding holds the value.
func TestSecretInAPathIsTheFilesFinding(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	aws := secrettest.AWSKey(t)
	awsSecret := secrettest.GenericSecret(t, 40)
	tokenPath := "ops/" + gh
	folderPath := "ops/" + gh + "x/notes.txt"
	awsPath := "ops/aws_access_key_id=" + aws + " aws_secret_access_key=" + awsSecret
	b := setup(t, map[string]string{"README.md": "hello\n"})
	diff := b.change(t, map[string]string{tokenPath: "harmless\n", folderPath: "harmless too\n", awsPath: "harmless\n"})
	// git accepts the tree: only the scan stands between these names and GitHub.
	if _, err := patch.ApplyToBase(context.Background(), b.git, b.base, diff, patch.Options{}); err != nil {
		t.Fatalf("the tree is refused before the scan: %v", err)
	}
	res := b.result(t, diff)
	if len(res.Findings) < 3 {
		t.Fatalf("findings %v (allowed %v): want the token in two names and the AWS key in one", res.Findings, res.Allowed)
	}
	rules := map[string]bool{}
	for _, f := range append(res.Findings, res.Allowed...) {
		rules[f.Rule] = true
		if f.Line != 0 || f.Where() != "its name" {
			t.Errorf("%v: want line 0, in the file's name", f)
		}
		for _, v := range []string{gh, aws, awsSecret} {
			if strings.Contains(f.File, v) || strings.Contains(f.String(), v) {
				t.Errorf("a finding holds the value: %q", f.String())
			}
		}
		if !strings.Contains(f.File, "[secret: ") {
			t.Errorf("%q: want the value replaced by [secret: RULE]", f.File)
		}
	}
	if !rules["github-pat"] || !rules["aws-access-token"] {
		t.Errorf("rules %v: want github-pat and aws-access-token", rules)
	}
}

// A value in a path is the patch's only when the patch names it: a file the base already has
// at that path, changed, is not blamed for its name (its content is judged as always), and a
// rename keeps what the source's name already held. A rename to a name with a new value is
// the patch's.
func TestSecretInABasePathIsNotThePatchs(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	other := githubToken(t)
	old := "keys/" + gh + ".txt"
	b := setup(t, map[string]string{old: "v1\n", "README.md": "hello\n"})

	changed := b.change(t, map[string]string{old: "v2\n"})
	res := b.result(t, changed)
	if len(res.Findings) != 0 {
		t.Errorf("a change of a base file is blamed for the base's name: %v", res.Findings)
	}
	for _, f := range res.Allowed {
		if strings.Contains(f.File, gh) {
			t.Errorf("a finding holds the value: %v", f)
		}
	}

	renamed := b.change(t, map[string]string{old: "", "moved/" + gh + ".txt": "v1\n"})
	if !strings.Contains(string(renamed), "rename from") {
		t.Fatalf("git did not take it as a rename:\n%s", renamed)
	}
	res = b.result(t, renamed)
	if len(res.Findings) != 0 || len(res.Allowed) != 1 || res.Allowed[0].Allowed != InBase {
		t.Errorf("findings %v, allowed %v: want the moved name's value as already in the base", res.Findings, res.Allowed)
	}

	renamedNew := b.change(t, map[string]string{old: "", "moved/" + other + ".txt": "v1\n"})
	if res := b.result(t, renamedNew); len(res.Findings) != 1 || res.Findings[0].Rule != "github-pat" {
		t.Errorf("findings %v: want the rename's new value refused", res.Findings)
	}
}

// A test the patch adds can print a key it assembles at run time; its file holds nothing
// gitleaks' rules read (a reversed string is past gitleaks' decoding, as documented), so the
// scan passes it. What it prints is text of the run, which every place that shows the run
// redacts with gitleaks' rules (githubapp.RedactRun; run's TestPatchWrittenTextIsRedacted).
func TestKeyAssembledAtRunTimePassesTheScan(t *testing.T) {
	t.Parallel()
	aws := secrettest.AWSKey(t)
	b := []byte(aws)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	bb := setup(t, map[string]string{"README.md": "hello\n"})
	diff := bb.change(t, map[string]string{
		"tests/test_deploy.py": "def test_deploy():\n    k = \"" + string(b) + "\"[::-1]\n    print(k)\n    assert False\n",
	})
	if res := bb.result(t, diff); len(res.Findings) != 0 {
		t.Fatalf("the scan refuses the test file: %v (the run-time case this documents is then moot)", res.Findings)
	}
}

// A symbolic link's target is its published bytes, scanned like a file's content.
func TestSymlinkTargetIsScanned(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{"README.md": "hello\n"})
	diff := []byte("diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+docs/" + gh + "\n\\ No newline at end of file\n")
	if res := b.result(t, diff); len(res.Findings) != 1 || res.Findings[0].Rule != "github-pat" || res.Findings[0].Line != 1 {
		t.Fatalf("findings %v, want the token in the link's target, line 1", res.Findings)
	}
}

// A value gitleaks finds only after decoding a name (a base64 file name, also below a folder:
// '/' is a letter of base64, so each name is read alone too) cannot be cut out of the name:
// the finding shows no part of the path.
func TestEncodedSecretInAPathHidesThePath(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	for _, name := range []string{
		base64.StdEncoding.EncodeToString([]byte("GITHUB_TOKEN=" + gh)),
		"ops/" + base64.RawURLEncoding.EncodeToString([]byte("GITHUB_TOKEN="+gh)),
	} {
		b := setup(t, map[string]string{"README.md": "hello\n"})
		res := b.result(t, b.change(t, map[string]string{name: "harmless\n"}))
		if len(res.Findings) == 0 {
			t.Errorf("%q: no finding; want the decoded token", name)
		}
		for _, f := range res.Findings {
			if f.File != "[a path holding a secret]" || f.Line != 0 {
				t.Errorf("%q: the finding names %q line %d; want no part of the path, in its name", name, f.File, f.Line)
			}
		}
	}
}
