package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// applyOnBase runs ApplyToBase against the test repository's base commit.
func (r *testRepo) applyOnBase(diff string, opt Options) (string, error) {
	r.t.Helper()
	return ApplyToBase(context.Background(), HostGit(r.dir), r.base, []byte(diff), opt)
}

// gitlink records a submodule entry at p pointing at commit in the index and commits it as
// the new base.
func (r *testRepo) addGitlink(p, commit string) {
	r.t.Helper()
	r.git("update-index", "--add", "--cacheinfo", "160000,"+commit+","+p)
	r.git("commit", "-q", "-m", "gitlink")
	r.base = strings.TrimSpace(r.git("rev-parse", "HEAD"))
}

func refusedFor(t *testing.T, err error, path, reason string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a *RefusedError for %s (%s)", err, path, reason)
	}
	for _, r := range re.Rejected {
		if r.Path == path && strings.Contains(r.Reason, reason) {
			return
		}
	}
	t.Fatalf("rejected %+v, want %s (%s)", re.Rejected, path, reason)
}

// TestApplyToBaseHostile: diffs whose text hides what git apply will do. Each passes the
// parser's checks (the text claims a plain file), and each is refused on the tree git builds.
func TestApplyToBaseHostile(t *testing.T) {
	t.Parallel()
	const fortyZeros = "0000000000000000000000000000000000000000"
	t.Run("RetargetExistingSymlinkWithoutMode", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"CONTRIBUTING": "->docs/CONTRIBUTING.md", "docs/CONTRIBUTING.md": "hi\n"})
		diff := "diff --git a/CONTRIBUTING b/CONTRIBUTING\nindex 1111111..2222222\n--- a/CONTRIBUTING\n+++ b/CONTRIBUTING\n" +
			"@@ -1 +1 @@\n-docs/CONTRIBUTING.md\n\\ No newline at end of file\n+../../../../../../../../etc/passwd\n\\ No newline at end of file\n"
		res, err := Sanitize([]byte(diff), Options{})
		if err != nil || len(res.Diff) == 0 {
			t.Fatalf("precondition: the parser alone lets this through (err %v); the test would prove nothing", err)
		}
		_, err = r.applyOnBase(diff, Options{})
		refusedFor(t, err, "CONTRIBUTING", "symlink escapes the repository")
	})
	t.Run("RetargetGitlinkWithoutMode", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"README": "x\n"})
		r.addGitlink("sub", strings.Repeat("a", 40))
		diff := "diff --git a/sub b/sub\nindex " + strings.Repeat("a", 40) + ".." + strings.Repeat("b", 40) + "\n--- a/sub\n+++ b/sub\n" +
			"@@ -1 +1 @@\n-Subproject commit " + strings.Repeat("a", 40) + "\n+Subproject commit " + strings.Repeat("b", 40) + "\n"
		_, err := r.applyOnBase(diff, Options{})
		refusedFor(t, err, "sub", "gitlink")
	})
	t.Run("NewGitlink", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"README": "x\n"})
		diff := "diff --git a/sub b/sub\nnew file mode 160000\nindex " + fortyZeros + ".." + strings.Repeat("c", 40) + "\n--- /dev/null\n+++ b/sub\n" +
			"@@ -0,0 +1 @@\n+Subproject commit " + strings.Repeat("c", 40) + "\n"
		_, err := r.applyOnBase(diff, Options{})
		refusedFor(t, err, "sub", "gitlink")
	})
	t.Run("LinkThroughBaseLink", func(t *testing.T) {
		t.Parallel()
		// d/up -> .. stays inside; x -> d/up/.. looks inside lexically but leaves the root.
		r := newRepo(t, map[string]string{"d/up": "->..", "d/f": "f\n"})
		_, err := r.applyOnBase(symlinkDiff("x", "d/up/.."), Options{})
		refusedFor(t, err, "x", "symlink escapes the repository")
	})
	t.Run("LinkThroughAbsoluteBaseLink", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"docs": "->/usr/share/doc"})
		_, err := r.applyOnBase(symlinkDiff("x", "docs/passwd"), Options{})
		refusedFor(t, err, "x", "outside the repository")
	})
	t.Run("UntouchedLinkMadeToEscape", func(t *testing.T) {
		t.Parallel()
		// x -> p/.. is the root while p is a folder; the patch replaces the folder p with a
		// link to ".", and x, which the patch never names, now leaves the repository.
		r := newRepo(t, map[string]string{"x": "->p/..", "p/f": "f\n"})
		diff := "diff --git a/p/f b/p/f\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/p/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-f\n" +
			symlinkDiff("p", ".")
		_, err := r.applyOnBase(diff, Options{})
		refusedFor(t, err, "x", "symlink escapes the repository")
	})
	t.Run("BaseLinkThatAlreadyEscapesIsLeftAlone", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"docs": "->/usr/share/doc", "a.txt": "a\n"})
		diff := "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
		if _, err := r.applyOnBase(diff, Options{}); err != nil {
			t.Fatalf("a change beside the repository's own absolute link was refused: %v", err)
		}
	})
	t.Run("LinkLoop", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"a": "->b"})
		_, err := r.applyOnBase(symlinkDiff("b", "a/x"), Options{})
		refusedFor(t, err, "b", "symlink loop")
	})
	t.Run("WorkflowWithoutMode", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{".github/workflows/ci.yml": "on: push\n"})
		diff := "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\nindex 1111111..2222222\n" +
			"--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-on: push\n+on: pull_request_target\n"
		_, err := r.applyOnBase(diff, Options{})
		refusedFor(t, err, ".github/workflows/ci.yml", "workflows")
		if _, err := r.applyOnBase(diff, Options{AllowWorkflowChanges: true}); err != nil {
			t.Fatalf("allowed workflow change refused: %v", err)
		}
	})
	t.Run("DoesNotApply", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t, map[string]string{"ok.txt": "other\n"})
		_, err := r.applyOnBase(okDiff, Options{})
		var ae *ApplyError
		if !errors.As(err, &ae) {
			t.Fatalf("err = %v, want *ApplyError", err)
		}
	})
}

// TestApplyToBaseHonest: what an honest agent produces passes, and the clone is untouched.
func TestApplyToBaseHonest(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{
		"src/a.py": "print(1)\n", "docs/link": "->../src/a.py", "run.sh": "echo\n", "old/name.txt": "n\n",
	})
	r.write("src/a.py", "print(2)\n")
	r.write("src/new.py", "x = 1\n")
	r.write("docs/link", "->../src/new.py") // retarget, still inside
	r.write("docs/dir-link", "->../src")
	r.chmod("run.sh", 0o755)
	r.git("mv", "old/name.txt", "new-name.txt") // a plain git mv
	r.git("add", "-A")
	diff := r.git("diff", "--cached", "--binary", "--no-renames", "--full-index", r.base)
	want := strings.TrimSpace(r.git("write-tree"))
	r.git("reset", "-q", "--hard", r.base)
	r.git("prune", "--expire=now") // so that a blob written by ApplyToBase would be counted
	objectsBefore := countFiles(t, filepath.Join(r.dir, ".git", "objects"))

	res, err := Sanitize([]byte(diff), Options{})
	if err != nil || len(res.Diff) == 0 {
		t.Fatalf("Sanitize: %v", err)
	}
	tree, err := r.applyOnBase(string(res.Diff), Options{})
	if err != nil {
		t.Fatalf("ApplyToBase: %v", err)
	}
	if tree != want {
		t.Errorf("tree %s, want %s (what git itself staged)", tree, want)
	}
	if n := countFiles(t, filepath.Join(r.dir, ".git", "objects")); n != objectsBefore {
		t.Errorf("the clone's object store changed: %d files, was %d", n, objectsBefore)
	}
	if err := CheckTree(context.Background(), HostGit(r.dir), r.base, r.base, Options{}); err != nil {
		t.Errorf("CheckTree of the base against itself: %v", err)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestResolveLink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		links map[string]string
		link  string
		want  string
	}{
		{"Sibling", map[string]string{"a/l": "b"}, "a/l", ""},
		{"UpInside", map[string]string{"a/l": "../b"}, "a/l", ""},
		{"Dangling", map[string]string{"l": "nowhere/at/all"}, "l", ""},
		{"Escape", map[string]string{"a/l": "../../b"}, "a/l", "symlink escapes the repository"},
		{"ChainInside", map[string]string{"l": "m/x", "m": "d"}, "l", ""},
		{"ChainEscape", map[string]string{"l": "m/../x", "m": "d/e/../../.."}, "l", "symlink escapes the repository"},
		{"ThroughParentLink", map[string]string{"l": "d/up/..", "d/up": ".."}, "l", "symlink escapes the repository"},
		{"IntoGitThroughLink", map[string]string{"l": "m/hooks", "m": ".git"}, "l", "symlink into .git"},
		{"Loop", map[string]string{"l": "m", "m": "l/x"}, "l", "symlink loop"},
		{"Absolute", map[string]string{"l": "/etc"}, "l", "symlink to an absolute path"},
		{"AbsoluteOnTheWay", map[string]string{"l": "m/x", "m": "/etc"}, "l", "outside the repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := resolveLink(tt.link, tt.links)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("resolveLink(%q) = %q, want %q", tt.link, got, tt.want)
			}
		})
	}
}
