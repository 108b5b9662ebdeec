package scanner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// patchOf makes the changes of edit in dir's working tree (removing remove's paths first,
// folders included, then writing write's files) and returns git's binary diff against HEAD,
// leaving the repository as it was.
func patchOf(t testing.TB, dir string, remove []string, write map[string]string) []byte {
	t.Helper()
	for _, p := range remove {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Write(t, dir, write)
	gittest.Git(t, dir, "add", "-A")
	diff := gittest.Git(t, dir, "diff", "--cached", "--binary", "--full-index", "--no-renames", "HEAD") + "\n"
	gittest.Git(t, dir, "reset", "-q", "--hard", "HEAD")
	gittest.Git(t, dir, "clean", "-qfdx")
	return []byte(diff)
}

// treeOf applies diff to base in a scratch index and returns each file's content.
func treeOf(t *testing.T, dir, base string, diff []byte) map[string]string {
	t.Helper()
	git := patch.HostGit(dir)
	sc, err := patch.NewScratch(context.Background(), git, base)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if len(diff) > 0 {
		if err := sc.Apply(context.Background(), git, diff); err != nil {
			t.Fatalf("the scanned diff does not apply to the base: %v\n%s", err, diff)
		}
	}
	names, err := git(context.Background(), sc.Env, nil, "ls-files", "-z")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range strings.Split(strings.TrimRight(string(names), "\x00"), "\x00") {
		b, err := git(context.Background(), sc.Env, nil, "show", ":"+n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func patterns(t *testing.T, ss ...string) []Pattern {
	var out []Pattern
	for _, s := range ss {
		p, err := ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestTreesResetConfiguration: the scanned tree is the patched tree with every configuration
// file as the base commit has it: a rewritten root file and a removed nested one are put back,
// a nested file and a folder of configuration the patch adds are left out, a file where the
// base has a folder blocks nothing else; the patch's other changes stay, and files no
// pattern names are the patch's. Everything is read from git's objects on the host.
func TestTreesResetConfiguration(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{
		".semgrepignore":     "docs/\n",
		"src/app.py":         "print(1)\n",
		"web/.eslintrc.json": "{\"root\": true}\n",
		"pyproject.toml":     "[tool.bandit]\nskips = []\n",
		"cfg/.semgrepignore": "x\n",
		"README.md":          "hi\n",
	})
	// One patch doing all of it, as the model's would; cfg/ becomes a file, so the base's
	// cfg/.semgrepignore cannot go back.
	full := patchOf(t, dir, []string{"web/.eslintrc.json", "cfg"}, map[string]string{
		".semgrepignore": "docs/\nsrc/\n", "src/app.py": "print(2)  # nosemgrep\n", "src/lib/.semgrepignore": "*.py\n",
		".semgrep/rules.yml": "rules: []\n", "pyproject.toml": "[tool.bandit]\nskips = ['B101']\n", "README.md": "hello\n",
		"cfg": "now a file\n",
	})
	trees, err := NewTrees(context.Background(), patch.HostGit(dir), base, base, full)
	if err != nil {
		t.Fatal(err)
	}
	defer trees.Close()
	scanDiff, resets, err := trees.For(context.Background(), patterns(t, ".semgrepignore", ".semgrep/", ".eslintrc*", "pyproject.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Reset{
		{Path: ".semgrep/rules.yml", InPatched: true},
		{Path: ".semgrepignore", InBase: true, InPatched: true},
		{Path: "cfg/.semgrepignore", InBase: true, Kept: true},
		{Path: "pyproject.toml", InBase: true, InPatched: true},
		{Path: "src/lib/.semgrepignore", InPatched: true},
		{Path: "web/.eslintrc.json", InBase: true},
	}
	if !reflect.DeepEqual(resets, want) {
		t.Errorf("resets = %+v\nwant %+v", resets, want)
	}
	got := treeOf(t, dir, base, scanDiff)
	wantTree := map[string]string{
		".semgrepignore": "docs/\n", "src/app.py": "print(2)  # nosemgrep\n", "web/.eslintrc.json": "{\"root\": true}\n",
		"pyproject.toml": "[tool.bandit]\nskips = []\n", "cfg": "now a file\n", "README.md": "hello\n",
	}
	if !reflect.DeepEqual(got, wantTree) {
		t.Errorf("scanned tree = %q\nwant %q", got, wantTree)
	}
	if files := Files(resets); len(files) != 6 || files[0] != ".semgrep/rules.yml" {
		t.Errorf("Files = %q", files)
	}

	// No pattern, or none that names a changed file: the scan is the patch itself.
	for _, ps := range [][]Pattern{nil, patterns(t, ".bandit", "tox.ini")} {
		same, resets, err := trees.For(context.Background(), ps)
		if err != nil || resets != nil || string(same) != string(full) {
			t.Errorf("For(%v) = %d bytes, %+v, %v; want the patch, no reset", ps, len(same), resets, err)
		}
	}
}

// TestTreesFollowUp: a follow-up's checkout is frognano's branch, where an earlier run's patch
// changed a configuration file; the scanned tree takes it from the base branch (configAt), not
// from the branch, though this run's patch does not touch it.
func TestTreesFollowUp(t *testing.T) {
	t.Parallel()
	dir, baseBranch := gittest.Repo(t, map[string]string{".semgrepignore": "docs/\n", "app.py": "a = 1\n"})
	gittest.Write(t, dir, map[string]string{".semgrepignore": "docs/\napp.py\n"})
	branch := gittest.Commit(t, dir, "an earlier run's patch")
	diff := patchOf(t, dir, nil, map[string]string{"app.py": "a = eval(x)\n"})
	trees, err := NewTrees(context.Background(), patch.HostGit(dir), branch, baseBranch, diff)
	if err != nil {
		t.Fatal(err)
	}
	defer trees.Close()
	scanDiff, resets, err := trees.For(context.Background(), patterns(t, ".semgrepignore"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Reset{{Path: ".semgrepignore", InBase: true, InPatched: true}}; !reflect.DeepEqual(resets, want) {
		t.Errorf("resets = %+v, want %+v", resets, want)
	}
	got := treeOf(t, dir, branch, scanDiff)
	if got[".semgrepignore"] != "docs/\n" || got["app.py"] != "a = eval(x)\n" {
		t.Errorf("scanned tree = %q", got)
	}
}

// TestTreesRefusesWhatGitCannotApply: a diff git cannot apply to the base is an error, and
// nothing of the clone changes.
func TestTreesRefusesWhatGitCannotApply(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{"a.py": "x\n"})
	_, err := NewTrees(context.Background(), patch.HostGit(dir), base, base, []byte("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-y\n+z\n"))
	var ae *patch.ApplyError
	if err == nil || !errors.As(err, &ae) {
		t.Errorf("NewTrees = %v, want an *ApplyError", err)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the clone changed: %q", st)
	}
}

// BenchmarkTrees is what resetting configuration files costs the host per run: a repository of
// 5,000 files (50 of them configuration files in nested folders), a patch that changes ten
// source files and two configuration files; NewTrees once, then For with semgrep's and eslint's
// patterns.
func BenchmarkTrees(b *testing.B) {
	files := map[string]string{}
	for i := range 5000 {
		files[fmt.Sprintf("pkg%02d/sub%d/f%04d.py", i%50, i%7, i)] = fmt.Sprintf("x = %d\n", i)
	}
	for i := range 50 {
		files[fmt.Sprintf("pkg%02d/.eslintrc.json", i)] = "{}\n"
	}
	files[".semgrepignore"] = "docs/\n"
	dir, base := gittest.Repo(b, files)
	write := map[string]string{".semgrepignore": "docs/\npkg00/\n", "pkg01/.eslintrc.json": "{\"rules\": {}}\n"}
	for i := range 10 {
		write[fmt.Sprintf("pkg%02d/sub%d/f%04d.py", i%50, i%7, i)] = "x = eval(s)\n"
	}
	diff := patchOf(b, dir, nil, write)
	var ps []Pattern
	for _, t := range []string{"semgrep", "eslint"} {
		for _, s := range toolByName(t).Config {
			ps = append(ps, mustPattern(s))
		}
	}
	ctx := context.Background()
	for b.Loop() {
		trees, err := NewTrees(ctx, patch.HostGit(dir), base, base, diff)
		if err != nil {
			b.Fatal(err)
		}
		_, resets, err := trees.For(ctx, ps)
		trees.Close()
		if err != nil || len(resets) != 2 {
			b.Fatalf("%d resets, %v", len(resets), err)
		}
	}
}
