package deps

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// diffOf makes the change in the checkout, takes `git diff --binary` of it against base as the
// runner takes the sandbox's, and puts the checkout back.
func diffOf(t *testing.T, dir, base string, change func()) []byte {
	t.Helper()
	change()
	gittest.Git(t, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", base).Output()
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "reset", "-q", "--hard", base)
	gittest.Git(t, dir, "clean", "-qfdx")
	return diff
}

// TestListReadsGitsView: the manifests are read from the base commit and the patched tree as
// git builds them; a manifest that does not parse, or that became a symbolic link, is a note.
func TestListReadsGitsView(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{
		"requirements.txt": "requests==2.25.0\nflask==2.0.0\n",
		"go.mod":           "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.7\n",
		"web/package.json": `{"name": "web", "version": "1.0.0", "dependencies": {"lodash": "4.17.15"}}`,
		"tools/Cargo.lock": "version = 3\n",
		"README.md":        "requests==1.0\n",
	})
	diff := diffOf(t, dir, base, func() {
		gittest.Write(t, dir, map[string]string{
			"requirements.txt": "requests==2.31.0\nflask==2.0.0\nurllib3==1.26.4\n",
			"go.mod":           "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.8\n",
			"web/package.json": `{"name": "web", "version": `,
			"README.md":        "requests==9.0\n",
			"app/Cargo.toml":   "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1.0.190\"\n",
		})
		if err := os.Remove(filepath.Join(dir, "tools/Cargo.lock")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "tools/Cargo.lock")); err != nil {
			t.Fatal(err)
		}
	})
	rep, err := List(context.Background(), patch.HostGit(dir), base, diff)
	if err != nil {
		t.Fatal(err)
	}
	want := "app/Cargo.toml crates.io serde added ->1.0.190\n" +
		"go.mod Go golang.org/x/text changed 0.3.7->0.3.8\n" +
		"requirements.txt PyPI requests changed 2.25.0->2.31.0\n" +
		"requirements.txt PyPI urllib3 added ->1.26.4\n"
	if got := short(rep.Changes); got != want {
		t.Errorf("changes\n%swant\n%s", got, want)
	}
	if got, want := strings.Join(rep.Files, " "), "app/Cargo.toml go.mod requirements.txt tools/Cargo.lock web/package.json"; got != want {
		t.Errorf("files %q, want %q", got, want)
	}
	if got, want := unreadOf(rep), "tools/Cargo.lock: it is a symbolic link, which frognano does not follow\n"+
		"web/package.json: it does not parse [it is not JSON: unexpected end of JSON input]\n"; got != want {
		t.Errorf("unread\n%swant\n%s", got, want)
	}
	if out := gittest.Git(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("the clone changed: %q", out)
	}
}

// unreadOf renders what could not be read as "file[:line] [what]: why [base]" lines.
func unreadOf(rep *Report) string {
	var b strings.Builder
	for _, u := range rep.Unread {
		b.WriteString(u.File)
		if u.Line > 0 {
			fmt.Fprintf(&b, ":%d", u.Line)
		}
		if u.What != "" {
			b.WriteString(" " + u.What)
		}
		b.WriteString(": " + u.Why)
		if u.Detail != "" {
			b.WriteString(" [" + u.Detail + "]")
		}
		if u.AtBase {
			b.WriteString(" [base]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestListOfAPatchThatDoesNotApply(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{"go.mod": "module m\n"})
	_, err := List(context.Background(), patch.HostGit(dir), base, []byte("diff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1 +1 @@\n-module x\n+module y\n"))
	if err == nil || !strings.Contains(err.Error(), "could not apply") {
		t.Errorf("error %v, want one saying git could not apply the patch", err)
	}
}

// TestListBoundsWhatItParses: a requirements file of a few MiB (which a small binary patch
// can make) is a note, not millions of packages in memory; a lock file of the same size is
// still read, up to the patch's total.
func TestListBoundsWhatItParses(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{"README.md": "x\n"})
	big := strings.Repeat("a==1\n", (2<<20)/5)
	diff := diffOf(t, dir, base, func() {
		gittest.Write(t, dir, map[string]string{"requirements.txt": big, "go.mod": "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.8\n"})
	})
	rep, err := List(context.Background(), patch.HostGit(dir), base, diff)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Changes {
		if c.File != "go.mod" {
			t.Errorf("change %+v: want go.mod's alone", c)
		}
	}
	if len(rep.Changes) == 0 {
		t.Error("go.mod's changes are missing")
	}
	if got, want := unreadOf(rep), "requirements.txt: it is over 1 MiB\n"; got != want {
		t.Errorf("unread %q, want %q", got, want)
	}
}
