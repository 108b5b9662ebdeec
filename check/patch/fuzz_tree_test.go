package patch

import (
	"context"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzBase is the base tree of FuzzApplyToBase: regular and executable files, symlinks
// (inside, up a level, absolute), a gitlink and a workflow.
var fuzzBase = map[string]string{
	"README.md": "hello\n", "src/a.py": "print(1)\n", "src/b.py": "x = 1\n",
	"CONTRIBUTING": "->docs/CONTRIBUTING.md", "docs/CONTRIBUTING.md": "Be kind.\n",
	"d/up": "->..", "abs": "->/usr/share/doc", ".github/workflows/ci.yml": "on: push\n",
}

// fuzzBaseEscapes are the links of fuzzBase that already leave the repository.
var fuzzBaseEscapes = map[string]bool{"abs": true}

// FuzzApplyToBase feeds attacker-chosen diffs to the whole host-side path (Sanitize, then
// ApplyToBase) against a real base tree, and judges what git really built: when ApplyToBase
// accepts, the tree is checked out into a folder and every symlink in it is resolved by the
// kernel's own rules (realpath -m), every changed entry is read from git, independently of
// the parser and of resolveLink.
func FuzzApplyToBase(f *testing.F) {
	const fortyA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	seeds := append([]string{}, fuzzSeeds...)
	seeds = append(seeds,
		"diff --git a/CONTRIBUTING b/CONTRIBUTING\nindex 1111111..2222222\n--- a/CONTRIBUTING\n+++ b/CONTRIBUTING\n"+
			"@@ -1 +1 @@\n-docs/CONTRIBUTING.md\n\\ No newline at end of file\n+../../etc/passwd\n\\ No newline at end of file\n",
		"diff --git a/sub b/sub\nindex "+fortyA+"..bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n--- a/sub\n+++ b/sub\n"+
			"@@ -1 +1 @@\n-Subproject commit "+fortyA+"\n+Subproject commit bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n",
		symlinkDiff("x", "d/up/.."),
		symlinkDiff("y", "abs/z"),
		symlinkDiff("z", "src"),
		"diff --git a/d/up b/d/up\ndeleted file mode 120000\nindex 1111111..0000000\n--- a/d/up\n+++ /dev/null\n@@ -1 +0,0 @@\n-..\n\\ No newline at end of file\n"+
			symlinkDiff("d", "."),
		"diff --git a/src/a.py b/src/a.py\nindex 1111111..2222222\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n",
		"diff --git a/src/a.py b/src/a.py\nold mode 100644\nnew mode 120000\nindex 1111111..2222222\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-print(1)\n+../..\n\\ No newline at end of file\n",
		"diff --git a/src/b.py b/src/b.py\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/src/b.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"+
			symlinkDiff("src/b.py", "../../.."),
	)
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(symlinkDiff("w", ".github/workflows")), true)
	r := newRepo(f, fuzzBase)
	r.git("update-index", "--add", "--cacheinfo", "160000,"+fortyA+",sub")
	r.git("commit", "-q", "-m", "gitlink")
	r.base = strings.TrimSpace(r.git("rev-parse", "HEAD"))
	git := HostGit(r.dir)
	f.Fuzz(func(t *testing.T, diff []byte, allowWorkflow bool) {
		opt := Options{AllowWorkflowChanges: allowWorkflow}
		res, err := Sanitize(diff, opt)
		if err != nil || len(res.Diff) == 0 {
			return
		}
		tree, err := ApplyToBase(context.Background(), git, r.base, res.Diff, opt)
		if err != nil {
			return
		}
		checkBuiltTree(t, r, res.Diff, tree, allowWorkflow)
	})
}

// checkBuiltTree is the fuzz oracle. ApplyToBase keeps no objects, so the patch is applied
// again the ordinary way, with git apply --index in a fresh checkout of the base, which must
// give the same tree; then the checkout on disk is judged: every symlink resolved by realpath
// (the kernel's rules, not resolveLink's) stays inside, and git's own diff-tree shows no
// gitlink change, no path into .git and no workflow change unless allowed.
func checkBuiltTree(t *testing.T, base *testRepo, diff []byte, tree string, allowWorkflow bool) {
	t.Helper()
	r := *base
	r.t = t // fail this input, not the fuzz target
	dst := filepath.Join(t.TempDir(), "checkout")
	r.gitIn(r.dir, nil, "clone", "-q", "--no-checkout", r.dir, dst)
	r.gitIn(dst, nil, "checkout", "-q", r.base)
	r.gitIn(dst, diff, "apply", "--index", "--whitespace=nowarn", "-")
	if got := strings.TrimSpace(r.gitIn(dst, nil, "write-tree")); got != tree {
		t.Fatalf("ApplyToBase built tree %s, git apply --index builds %s", tree, got)
	}
	root, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && d.IsDir() && filepath.Dir(p) == root {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if fuzzBaseEscapes[filepath.ToSlash(rel)] && r.gitIn(dst, nil, "diff", "--cached", "--name-only", r.base, "--", rel) == "" {
			return nil // the base's own escaping link, unchanged: the repository's, not the patch's
		}
		out, err := exec.Command("realpath", "-m", "--", p).Output()
		if err != nil {
			t.Fatalf("realpath %s: %v", rel, err)
		}
		resolved := strings.TrimSpace(string(out))
		if resolved != root && !strings.HasPrefix(resolved, root+"/") {
			t.Fatalf("accepted tree holds %s resolving to %s, outside the checkout", rel, resolved)
		}
		if inside := strings.ToLower(strings.TrimPrefix(resolved, root)); inside == "/.git" || strings.HasPrefix(inside, "/.git/") {
			t.Fatalf("accepted tree holds %s resolving into .git (%s)", rel, resolved)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := r.gitIn(dst, nil, "diff", "--cached", "--raw", "-z", "--no-renames", r.base)
	changes, err := parseRawDiff([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		switch {
		case c.OldMode == ModeGitlink || c.NewMode == ModeGitlink:
			t.Fatalf("accepted tree changes the gitlink %s (%s -> %s)", c.Path, c.OldMode, c.NewMode)
		case !allowWorkflow && strings.HasPrefix(strings.ToLower(c.Path), ".github/workflows"):
			t.Fatalf("accepted tree changes the workflow %s", c.Path)
		}
		for _, comp := range strings.Split(c.Path, "/") {
			if strings.EqualFold(strings.TrimRight(comp, ". "), ".git") {
				t.Fatalf("accepted tree writes %s", c.Path)
			}
		}
	}
}
