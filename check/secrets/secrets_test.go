package secrets

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/secrettest"
)

func githubToken(t *testing.T) string {
	return "ghp" + "_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
}
func privateKey(t *testing.T) string {
	k, _ := secrettest.PrivateKey(t)
	return k
}

type bundle struct {
	dir, base string
	git       patch.Git
}

// setup makes a real repository with files at its base commit.
func setup(t *testing.T, files map[string]string) *bundle {
	t.Helper()
	dir, base := gittest.Repo(t, files)
	return &bundle{dir: dir, base: base, git: patch.HostGit(dir)}
}

// change writes files into the working tree (a "" value deletes the file), takes the patch as
// the runner does (`git diff --binary` of everything against the base) and resets the tree.
func (b *bundle) change(t *testing.T, files map[string]string) []byte {
	t.Helper()
	for p, c := range files {
		if c == "" {
			if err := os.Remove(filepath.Join(b.dir, p)); err != nil {
				t.Fatal(err)
			}
			delete(files, p)
		}
	}
	gittest.Write(t, b.dir, files)
	gittest.Git(t, b.dir, "add", "-A")
	diff, err := exec.Command("git", "-C", b.dir, "diff", "--cached", "--binary", b.base).Output()
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, b.dir, "reset", "-q", "--hard", b.base)
	gittest.Git(t, b.dir, "clean", "-qfdx")
	return diff
}

// scan scans diff with the base commit's allow rules and returns what refuses the patch.
func (b *bundle) scan(t *testing.T, diff []byte) []Finding {
	t.Helper()
	return b.result(t, diff).Findings
}

func (b *bundle) result(t *testing.T, diff []byte) Result {
	t.Helper()
	got, err := Scan(context.Background(), b.git, Input{Base: b.base, Diff: diff, AllowListAt: b.base})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func rulesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

func TestSecretsInANewFileAndInAChangedLine(t *testing.T) {
	t.Parallel()
	aws, gh, key := secrettest.AWSKey(t), githubToken(t), privateKey(t)
	b := setup(t, map[string]string{
		"app/config.py": "A = 1\nB = 2\nC = 3\n",
		"README.md":     "hello\n",
	})
	diff := b.change(t, map[string]string{
		// a changed line, line 2
		"app/config.py": "A = 1\nB = \"" + gh + "\"\nC = 3\n",
		// a new file: an AWS key on line 3, a private key from line 5
		"deploy/creds.txt": "# creds\n\naws_access_key_id = " + aws + "\n\n" + key + "\n",
	})
	got := b.scan(t, diff)
	want := []Finding{
		{Rule: "github-pat", File: "app/config.py", Line: 2},
		{Rule: "aws-access-token", File: "deploy/creds.txt", Line: 3},
		{Rule: "private-key", File: "deploy/creds.txt", Line: 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings:\n got %v\nwant %v", got, want)
	}
	for _, f := range got {
		for _, v := range []string{aws, gh, key, key[40:80]} {
			if strings.Contains(f.String(), v) || strings.Contains(f.Rule+f.File, v) {
				t.Fatalf("finding %v holds a secret's value", f)
			}
		}
	}
}

// TestSecretsTheBaseHoldsAreNotThePatchs: a changed file is scanned whole, and a value its base
// already held (by the same rule) is listed as such, not blamed on the patch; a deleted file
// publishes nothing.
func TestSecretsTheBaseHoldsAreNotThePatchs(t *testing.T) {
	t.Parallel()
	aws := secrettest.AWSKey(t)
	b := setup(t, map[string]string{"old.txt": "k = " + aws + "\nx = 1\n", "gone.txt": "k = " + aws + "\n"})
	diff := b.change(t, map[string]string{"old.txt": "k = " + aws + "\nx = 2\n", "gone.txt": ""})
	got := b.result(t, diff)
	want := Result{Allowed: []Finding{{Rule: "aws-access-token", File: "old.txt", Line: 1, Allowed: InBase}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan: got %+v, want %+v", got, want)
	}
	if s := got.Allowed[0].String(); s != `aws-access-token in "old.txt" line 1 (already in the base)` {
		t.Errorf("String: %s", s)
	}
}

func TestBinaryFileIsScannedByItsContent(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{"README.md": "hello\n"})
	// .bin is one of the paths gitleaks' defaults skip; frognano's scan does not.
	diff := b.change(t, map[string]string{"blob.bin": "\x00\x01\x02binary\x00\ntoken=" + gh + "\x00\xff\n"})
	if !strings.Contains(string(diff), "GIT binary patch") {
		t.Fatalf("the test patch is not binary:\n%s", diff)
	}
	got := b.scan(t, diff)
	want := []Finding{{Rule: "github-pat", File: "blob.bin", Line: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %v, want %v", got, want)
	}
}

func TestInlineAllowCommentInThePatchDoesNotHide(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{"README.md": "hello\n"})
	diff := b.change(t, map[string]string{"a.py": "T = \"" + gh + "\"  # gitleaks:allow\n"})
	if got := rulesOf(b.scan(t, diff)); !reflect.DeepEqual(got, []string{"github-pat"}) {
		t.Fatalf("findings: %v", got)
	}
}

const fixtureAllowList = `
[[allowlists]]
description = "test fixtures"
paths = ['''^testdata/fixtures/''']
`

func TestAllowListOfTheBaseCommitLetsAFixtureThrough(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{".gitleaks.toml": fixtureAllowList, "README.md": "hello\n"})
	diff := b.change(t, map[string]string{
		"testdata/fixtures/token.txt": gh + "\n",
		"app.py":                      "T = \"" + gh + "\"\n",
	})
	got := b.result(t, diff)
	want := Result{
		Findings: []Finding{{Rule: "github-pat", File: "app.py", Line: 1}},
		Allowed:  []Finding{{Rule: "github-pat", File: "testdata/fixtures/token.txt", Line: 1, Allowed: ByAllowList}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan: got %+v, want %+v", got, want)
	}
	if s := got.Allowed[0].AllowedBy(); s != "allowed by .gitleaks.toml of the base" {
		t.Errorf("AllowedBy: %s", s)
	}
}

func TestAllowListAddedByThePatchDoesNotCount(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{"README.md": "hello\n"})
	diff := b.change(t, map[string]string{
		".gitleaks.toml":              fixtureAllowList + "\n[[allowlists]]\npaths = ['''.*''']\n",
		".gitleaksignore":             "testdata/fixtures/token.txt:github-pat:1\n",
		"testdata/fixtures/token.txt": gh + "\n",
	})
	got := b.scan(t, diff)
	want := []Finding{{Rule: "github-pat", File: "testdata/fixtures/token.txt", Line: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %v, want %v", got, want)
	}
}

func TestAllowListCannotTurnARuleOff(t *testing.T) {
	t.Parallel()
	gh := githubToken(t)
	b := setup(t, map[string]string{
		".gitleaks.toml": "[extend]\nuseDefault = false\ndisabledRules = [\"github-pat\"]\n",
		"README.md":      "hello\n",
	})
	diff := b.change(t, map[string]string{"a.txt": gh + "\n"})
	if got := rulesOf(b.scan(t, diff)); !reflect.DeepEqual(got, []string{"github-pat"}) {
		t.Fatalf("findings: %v", got)
	}
}

func TestBrokenAllowListIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{".gitleaks.toml": "[[allowlists]\nnot toml", "README.md": "hello\n"})
	diff := b.change(t, map[string]string{"a.txt": "x\n"})
	if _, err := Scan(context.Background(), b.git, Input{Base: b.base, Diff: diff, AllowListAt: b.base}); err == nil {
		t.Fatal("a broken allow-list did not stop the scan")
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": Block, "block": Block, "warn": Warn, " warn ": Warn} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("off"); err == nil {
		t.Error(`ParseMode("off") did not fail`)
	}
}
