package runner_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
)

type secretsBundle struct {
	aws, gh, key string
	cfg          runner.Config
	log          *slog.Logger
	logs         *bytes.Buffer
	// dir is the checkout, base its commit, setupCommit the run's Spec.SetupCommit; res is
	// what the last check made of a patch.
	dir, base, setupCommit string
	res                    *runner.Result
}

// setupSecrets makes a real repository whose base holds app/config.py (and files), and a run
// of mode on it whose logger writes to logs.
func setupSecrets(t *testing.T, mode secrets.Mode, files map[string]string) *secretsBundle {
	t.Helper()
	key := base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 240)))
	kind := "RSA " + "PRIVATE KEY"
	b := &secretsBundle{
		aws:  secrettest.AWSKey(t),
		gh:   "ghp" + "_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36),
		key:  "-----BEGIN " + kind + "-----\n" + key[:64] + "\n" + key[64:128] + "\n" + key[128:] + "\n-----END " + kind + "-----",
		logs: &bytes.Buffer{},
	}
	all := map[string]string{"app/config.py": "A = 1\nB = 2\nC = 3\n"}
	for p, c := range files {
		all[p] = c
	}
	dir, base := gittest.Repo(t, all)
	b.cfg = runner.DefaultConfig()
	b.cfg.Secrets = mode
	b.log = slog.New(slog.NewJSONHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.dir, b.base = dir, base
	return b
}

// check runs the run's patch checks on diff (runner.CheckPatch) and keeps the Result in b.res.
func (b *secretsBundle) check(diff []byte) {
	b.res = runner.CheckPatch(context.Background(), b.cfg, b.log, b.dir, b.base, b.setupCommit, diff)
}

// patch writes files over the base in the checkout, takes `git diff --binary` of them as the
// runner takes the sandbox's, and puts the checkout back.
func (b *secretsBundle) patch(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := b.dir
	gittest.Write(t, dir, files)
	gittest.Git(t, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", b.base).Output()
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "reset", "-q", "--hard", b.base)
	gittest.Git(t, dir, "clean", "-qfdx")
	return diff
}

// leaky is a patch with a GitHub token on a changed line and, in a new file, an AWS key
// (line 3) and a private key (from line 5).
func (b *secretsBundle) leaky(t *testing.T) []byte {
	return b.patch(t, map[string]string{
		"app/config.py":    "A = 1\nB = \"" + b.gh + "\"\nC = 3\n",
		"deploy/creds.txt": "# creds\n\naws_access_key_id = " + b.aws + "\n\n" + b.key + "\n",
	})
}

var leakyFindings = []secrets.Finding{
	{Rule: "github-pat", File: "app/config.py", Line: 2},
	{Rule: "aws-access-token", File: "deploy/creds.txt", Line: 3},
	{Rule: "private-key", File: "deploy/creds.txt", Line: 5},
}

// checkNoValue fails when any value appears in what the run keeps: its notes, its report, the
// Result as stored (JSON) and the logs.
func (b *secretsBundle) checkNoValue(t *testing.T) {
	t.Helper()
	stored, err := json.Marshal(b.res)
	if err != nil {
		t.Fatal(err)
	}
	hay := map[string]string{
		"notes": strings.Join(b.res.Notes, "\n"), "report": report.Markdown(b.res),
		"summary": report.Summary(b.res, report.Fit{Limit: report.GitHubBodyLimit}), "headline": report.Headline(b.res),
		"stored result": string(stored), "logs": b.logs.String(),
	}
	keyBody := strings.Split(b.key, "\n")[1]
	for name, h := range hay {
		for _, v := range []string{b.aws, b.gh, keyBody} {
			if strings.Contains(h, v) {
				t.Errorf("the %s hold a secret's value", name)
			}
		}
	}
}

func TestPatchWithSecretsIsRefused(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, secrets.Block, nil)
	b.check(b.leaky(t))
	if b.res.Patch != nil {
		t.Fatal("a patch holding secrets was kept for publishing")
	}
	if !reflect.DeepEqual(b.res.SecretFindings, leakyFindings) {
		t.Fatalf("findings: got %v, want %v", b.res.SecretFindings, leakyFindings)
	}
	// The findings are a table in the report and in the status comment of a run without a
	// pull request (the runner's summary), in plain markdown: code spans, no escaped prose.
	rows := []string{"| `github-pat` | `app/config.py` | 2 | **nothing** |", "| `aws-access-token` | `deploy/creds.txt` | 3 | **nothing** |",
		"| `private-key` | `deploy/creds.txt` | 5 | **nothing** |"}
	for name, text := range map[string]string{"report": report.Markdown(b.res), "summary": report.Summary(b.res, report.Fit{Limit: report.GitHubBodyLimit})} {
		for _, want := range append(rows, "**The patch was refused:** the files it would publish hold what looks like a secret",
			"- Patch: none: refused for what looks like a secret (listed under **Secrets**)") {
			if !strings.Contains(text, want) {
				t.Errorf("the %s does not say %q:\n%s", name, want, text)
			}
		}
		if strings.Contains(text, `\-`) || strings.Contains(text, `\"`) {
			t.Errorf("the %s escapes frognano's own words:\n%s", name, text)
		}
	}
	if len(b.res.Notes) != 0 {
		t.Errorf("the notes repeat the findings as prose: %q", b.res.Notes)
	}
	b.checkNoValue(t)
}

func TestPatchWithSecretsInWarnModeIsKept(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, secrets.Warn, nil)
	b.check(b.leaky(t))
	if b.res.Patch == nil || len(b.res.Patch.Diff) == 0 {
		t.Fatalf("FROGNANO_SECRETS=warn refused the patch: %q", b.res.Notes)
	}
	if !reflect.DeepEqual(b.res.SecretFindings, leakyFindings) {
		t.Fatalf("findings: got %v, want %v", b.res.SecretFindings, leakyFindings)
	}
	if r := report.Markdown(b.res); !strings.Contains(r, "it was published because `FROGNANO_SECRETS=warn`") ||
		!strings.Contains(r, "| `private-key` | `deploy/creds.txt` | 5 | **nothing** |") {
		t.Errorf("the report does not list the findings:\n%s", r)
	}
	// The status comment next to the pull request says so.
	if h := report.Headline(b.res); !strings.Contains(h, "**The patch holds what looks like a secret**") ||
		!strings.Contains(h, "`github-pat` in `app/config.py` line 2") {
		t.Errorf("the headline does not list the findings: %s", h)
	}
	// The patch itself is published as it is, under warn; everything else stays clean.
	b.res.Patch = nil
	b.checkNoValue(t)
}

func TestSecretAllowListComesFromTheBase(t *testing.T) {
	t.Parallel()
	allow := "[[allowlists]]\npaths = ['''^testdata/fixtures/''']\n"
	t.Run("InTheBaseCommit", func(t *testing.T) {
		t.Parallel()
		b := setupSecrets(t, secrets.Block, map[string]string{".gitleaks.toml": allow})
		b.check(b.patch(t, map[string]string{"testdata/fixtures/token.txt": b.gh + "\n"}))
		if b.res.Patch == nil || len(b.res.SecretFindings) != 0 {
			t.Fatalf("the base's allow-list did not let the fixture through: %q", b.res.Notes)
		}
		want := []secrets.Finding{{Rule: "github-pat", File: "testdata/fixtures/token.txt", Line: 1, Allowed: secrets.ByAllowList}}
		if !reflect.DeepEqual(b.res.SecretsAllowed, want) {
			t.Errorf("allowed: got %v, want %v", b.res.SecretsAllowed, want)
		}
		if r := report.Markdown(b.res); !strings.Contains(r, "| `github-pat` | `testdata/fixtures/token.txt` | 1 | `.gitleaks.toml` of the base |") {
			t.Errorf("the report does not list the allowed fixture:\n%s", r)
		}
	})
	t.Run("AddedByThePatch", func(t *testing.T) {
		t.Parallel()
		b := setupSecrets(t, secrets.Block, nil)
		b.check(b.patch(t, map[string]string{
			".gitleaks.toml":              allow,
			".gitleaksignore":             "testdata/fixtures/token.txt:github-pat:1\n",
			"testdata/fixtures/token.txt": b.gh + "\n",
		}))
		want := []secrets.Finding{{Rule: "github-pat", File: "testdata/fixtures/token.txt", Line: 1}}
		if b.res.Patch != nil || !reflect.DeepEqual(b.res.SecretFindings, want) {
			t.Fatalf("the patch's own allow-list counted: patch kept %v, findings %v", b.res.Patch != nil, b.res.SecretFindings)
		}
		b.checkNoValue(t)
	})
}

func TestPatchWithoutSecretsIsKept(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, secrets.Block, nil)
	b.check(b.patch(t, map[string]string{"app/config.py": "A = 1\nB = 4\nC = 3\n"}))
	if b.res.Patch == nil || len(b.res.Notes) != 0 || b.res.SecretFindings != nil {
		t.Fatalf("a clean patch: kept %v, notes %q, findings %v", b.res.Patch != nil, b.res.Notes, b.res.SecretFindings)
	}
}

// TestFollowUpSecretAllowListComesFromTheBaseBranch: on a follow-up, the checkout is
// frognano's branch, whose commits an earlier model wrote; an allow-list one of them added
// lets nothing through, only the base branch's (Spec.SetupCommit) counts.
func TestFollowUpSecretAllowListComesFromTheBaseBranch(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, secrets.Block, nil)
	dir := b.dir
	b.setupCommit = b.base
	gittest.Write(t, dir, map[string]string{".gitleaks.toml": "[[allowlists]]\npaths = ['''.*''']\n"})
	gittest.Git(t, dir, "add", "-A")
	gittest.In(t, dir)("commit", "-q", "-m", "an earlier run's patch")
	b.base = gittest.Git(t, dir, "rev-parse", "HEAD")
	b.check(b.patch(t, map[string]string{"app/token.txt": b.gh + "\n"}))
	want := []secrets.Finding{{Rule: "github-pat", File: "app/token.txt", Line: 1}}
	if b.res.Patch != nil || !reflect.DeepEqual(b.res.SecretFindings, want) {
		t.Fatalf("frognano's branch's allow-list counted: patch kept %v, findings %v", b.res.Patch != nil, b.res.SecretFindings)
	}
	b.checkNoValue(t)
}
