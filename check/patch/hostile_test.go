package patch

import (
	"errors"
	"testing"
)

// textFile writes a one-line new-file diff for a name as it appears after "a/"/"b/".
func newFileDiff(name string) string {
	return "diff --git a/" + name + " b/" + name + "\nnew file mode 100644\nindex 0000000..9daeafb\n" +
		"--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1 @@\n+test\n"
}

func symlinkDiff(name, target string) string {
	return "diff --git a/" + name + " b/" + name + "\nnew file mode 120000\nindex 0000000..9daeafb\n" +
		"--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1 @@\n+" + target + "\n\\ No newline at end of file\n"
}

const okDiff = "diff --git a/ok.txt b/ok.txt\nindex 9daeafb..e69de29 100644\n--- a/ok.txt\n+++ b/ok.txt\n@@ -1 +1 @@\n-test\n+best\n"

// TestSanitizeHostile feeds hand-written diffs that git would never produce from an
// honest working tree. Each must refuse the whole patch with the right reason.
func TestSanitizeHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		diff   string
		path   string
		reason string
	}{
		{"DotDot", okDiff + newFileDiff("../../etc/passwd"), "../../etc/passwd", "path component .."},
		{"DotDotInside", newFileDiff("src/../../x"), "src/../../x", "path component .."},
		{"Dot", newFileDiff("./x"), "./x", "path component ."},
		{"EmptyComponent", newFileDiff("a//b"), "a//b", "empty path component"},
		{"GitHook", okDiff + newFileDiff(".git/hooks/pre-commit"), ".git/hooks/pre-commit", "path into .git"},
		{"GitUpper", newFileDiff(".GIT/config"), ".GIT/config", "path into .git"},
		{"GitTrailingDot", newFileDiff(".git./config"), ".git./config", "path into .git"},
		{"GitTrailingSpace", newFileDiff("sub/.git /config"), "sub/.git /config", "path into .git"},
		{"GitStream", newFileDiff(".git::$INDEX_ALLOCATION/config"), ".git::$INDEX_ALLOCATION/config", "path into .git"},
		{"GitShortName", newFileDiff("Git~1/config"), "Git~1/config", "path into .git"},
		{"GitHFS", newFileDiff(".gi\u200dt/config"), ".gi\u200dt/config", "path into .git"},
		{"GitNested", newFileDiff("vendor/x/.git/config"), "vendor/x/.git/config", "path into .git"},
		{"GitDirItself", newFileDiff(".git"), ".git", "path into .git"},
		{"GitOctalQuoted", "diff --git \"a/\\056git/config\" \"b/\\056git/config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/\\056git/config\"\n@@ -0,0 +1 @@\n+x\n", ".git/config", "path into .git"},
		{"Absolute", "diff --git a//abs/path b//abs/path\nnew file mode 100644\n--- /dev/null\n+++ b//abs/path\n@@ -0,0 +1 @@\n+x\n", "/abs/path", "absolute path"},
		{"DriveLetter", newFileDiff("C:/x"), "C:/x", "drive letter in path"},
		{"Backslash", newFileDiff(`..\evil`), `..\evil`, "backslash in path"},
		{"CarriageReturn", newFileDiff("x\r"), "x\r", "control character in path"},
		{"SymlinkToEtc", symlinkDiff("etc", "/etc"), "etc", "symlink to an absolute path"},
		{"SymlinkEscapes", symlinkDiff("link", "../../x"), "link", "symlink escapes the repository"},
		{"SymlinkEscapesDeep", symlinkDiff("a/b/link", "../../../x"), "a/b/link", "symlink escapes the repository"},
		{"SymlinkParent", symlinkDiff("link", ".."), "link", "symlink escapes the repository"},
		{"SymlinkIntoGit", symlinkDiff("a/link", "../.git/hooks"), "a/link", "symlink into .git"},
		{"SymlinkIntoGitLooping", symlinkDiff("link", "a/../.GIT"), "link", "symlink into .git"},
		{"SymlinkEmpty", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+\n\\ No newline at end of file\n", "l", "symlink with an empty target"},
		{"SymlinkTwoLines", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1,2 @@\n+a\n+/etc\n", "l", "symlink target not readable from the diff"},
		{"SymlinkNoContent", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..e69de29\n", "l", "symlink target not readable from the diff"},
		{"SymlinkBinary", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..9daeafb\nGIT binary patch\nliteral 4\nLcmZ?wcXD<G00aO6\n\n", "l", "symlink target not readable from the diff"},
		{"ModeToSymlink", "diff --git a/f b/f\nold mode 100644\nnew mode 120000\n", "f", "symlink target not readable from the diff"},
		{"PureRenameWithoutBaseLookup", "diff --git a/a/b/l b/l\nsimilarity index 100%\nrename from a/b/l\nrename to l\n", "l", "rename without a mode; cannot rule out a symlink"},
		{"RenameIntoGit", "diff --git a/x b/.git/config\nsimilarity index 100%\nrename from x\nrename to .git/config\n", ".git/config", "path into .git"},
		{"RenameFromGit", "diff --git a/.git/config b/x\nsimilarity index 100%\nrename from .git/config\nrename to x\n", ".git/config", "path into .git"},
		{"CopyOutOfRepo", "diff --git a/x b/../x\nsimilarity index 100%\ncopy from x\ncopy to ../x\n", "../x", "path component .."},
		{"WriteThroughNewSymlink", symlinkDiff("d", "sub") + newFileDiff("d/x"), "d/x", "path below a symlink the patch creates"},
		{"LitterUnderGit", newFileDiff(".git/__pycache__/x.pyc"), ".git/__pycache__/x.pyc", "path into .git"},
		{"GithubDirAsSymlinkIsWorkflow", symlinkDiff(".github", "ci") + newFileDiff("ci/workflows/x.yml"), "", ""},
		{"WorkflowUnderGit", newFileDiff(".git/.github/workflows/x.yml"), ".git/.github/workflows/x.yml", "path into .git"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Sanitize([]byte(tc.diff), Options{})
			if tc.reason == "" {
				// Not refused: the symlink replacing .github is dropped as a workflow change.
				if err != nil || len(res.Dropped) != 1 || res.Dropped[0] != (Dropped{Path: ".github", Reason: DropWorkflow}) {
					t.Fatalf("Sanitize = %+v, %v", res, err)
				}
				return
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Sanitize error = %v, want *RefusedError", err)
			}
			if len(res.Diff) != 0 || len(res.Files) != 0 {
				t.Errorf("refused patch still returned content: %+v", res)
			}
			want := Rejected{Path: tc.path, Reason: tc.reason}
			found := false
			for _, r := range refused.Rejected {
				found = found || r == want
			}
			if !found {
				t.Errorf("rejected %q, want it to include %q", refused.Rejected, want)
			}
		})
	}
}
