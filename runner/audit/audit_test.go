package audit_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner/audit"
)

// The checks that run on the host's clone alone, each on a real repository and a patch taken
// as the runner takes the sandbox's (`git diff --binary` against the base). The ones that make
// sandboxes (Scanners, Installed) are proven through whole runs in runner's tests
// (TestScannersEndToEnd, TestRunGoEnvironment).

type bundle struct {
	a     *audit.Auditor
	notes []string
}

// setup makes a repository of files and an Auditor on it whose notes the bundle keeps.
func setup(t *testing.T, files map[string]string) *bundle {
	t.Helper()
	dir, base := gittest.Repo(t, files)
	b := &bundle{}
	b.a = &audit.Auditor{RepoDir: dir, Base: base, ConfigAt: base, Note: func(n string) { b.notes = append(b.notes, n) }}
	return b
}

// patch writes files over the base, takes the diff, checks it as the runner does
// (patch.Sanitize), and puts the checkout back.
func (b *bundle) patch(t *testing.T, files map[string]string) *patch.Checked {
	t.Helper()
	dir := b.a.RepoDir
	gittest.Write(t, dir, files)
	gittest.Git(t, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", b.a.Base).Output()
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "reset", "-q", "--hard", b.a.Base)
	p, err := patch.Sanitize(diff, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	token := "ghp" + "_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
	want := secrets.Finding{Rule: "github-pat", File: "app/config.py", Line: 2}
	t.Run("BlockRefuses", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"app/config.py": "A = 1\n"})
		found, _, err := b.a.Secrets(context.Background(), b.patch(t, map[string]string{"app/config.py": "A = 1\nB = \"" + token + "\"\n"}), secrets.Block)
		var se *audit.SecretsError
		if !errors.As(err, &se) || len(found) != 1 || found[0] != want {
			t.Fatalf("found %v, err %v; want %v and a *SecretsError", found, err, want)
		}
		if strings.Contains(err.Error(), token) {
			t.Error("the refusal names the secret's value")
		}
	})
	t.Run("WarnKeeps", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"app/config.py": "A = 1\n"})
		found, _, err := b.a.Secrets(context.Background(), b.patch(t, map[string]string{"app/config.py": "A = 1\nB = \"" + token + "\"\n"}), secrets.Warn)
		if err != nil || len(found) != 1 || found[0] != want {
			t.Fatalf("found %v, err %v; want %v kept", found, err, want)
		}
	})
	t.Run("AllowedByTheBase", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"app/config.py": "A = 1\n", ".gitleaks.toml": "[[allowlists]]\npaths = ['''^app/''']\n"})
		found, allowed, err := b.a.Secrets(context.Background(), b.patch(t, map[string]string{"app/config.py": "A = 1\nB = \"" + token + "\"\n"}), secrets.Block)
		if err != nil || len(found) != 0 || len(allowed) != 1 || allowed[0].Allowed != secrets.ByAllowList {
			t.Fatalf("found %v, allowed %v, err %v; want it allowed by the base's .gitleaks.toml", found, allowed, err)
		}
	})
	t.Run("NotScannedUnderWarnIsANote", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"app/config.py": "A = 1\n"})
		p := b.patch(t, map[string]string{"app/config.py": "A = 2\n"})
		b.a.Base = strings.Repeat("0", 40) // no such commit: the scan cannot be done
		found, allowed, err := b.a.Secrets(context.Background(), p, secrets.Warn)
		if err != nil || found != nil || allowed != nil || len(b.notes) != 1 {
			t.Fatalf("found %v, allowed %v, err %v, notes %q; want one note", found, allowed, err, b.notes)
		}
		if _, _, err := b.a.Secrets(context.Background(), p, secrets.Block); err == nil {
			t.Error("under block, a patch that could not be scanned is kept")
		}
	})
}

func TestAddedListsSuppressions(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"app/run.py": "import subprocess\n"})
	added, sup, more := b.a.Added(context.Background(), b.patch(t, map[string]string{
		"app/run.py": "import subprocess\nsubprocess.call(c, shell=True)  # nosec B602\n",
	}))
	if len(added) != 1 || added[0].Path != "app/run.py" || added[0].Line != 2 {
		t.Fatalf("added %+v; want line 2 of app/run.py", added)
	}
	if len(sup) != 1 || sup[0].File != "app/run.py" || sup[0].Line != 2 || sup[0].Kind != "nosec" || more != 0 {
		t.Fatalf("suppressions %+v (+%d); want the nosec on line 2", sup, more)
	}
	if added, _, _ := b.a.Added(context.Background(), nil); added != nil {
		t.Errorf("no patch: added %+v", added)
	}
}

func TestDependencies(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"requirements.txt": "requests==2.31.0\n", "app.py": "x = 1\n"})
	rep := b.a.Dependencies(context.Background(), b.patch(t, map[string]string{"requirements.txt": "requests==2.31.0\nflask==3.0.0\n"}), "")
	if rep == nil || len(rep.Changes) != 1 || rep.Changes[0].Name != "flask" || rep.Changes[0].Kind != deps.Added || rep.VulnData {
		t.Fatalf("report %+v; want flask added, no vulnerability data", rep)
	}
	if !audit.Installable(rep.Changes[0]) {
		t.Error("a registry version is not installable")
	}
	if rep := b.a.Dependencies(context.Background(), b.patch(t, map[string]string{"app.py": "x = 2\n"}), ""); rep != nil {
		t.Errorf("a patch that touches no dependency file: %+v", rep)
	}
	if len(b.notes) != 0 {
		t.Errorf("notes: %q", b.notes)
	}
}
