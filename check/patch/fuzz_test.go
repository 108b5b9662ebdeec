package patch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// fuzzSeeds are small diffs covering every construct the parser knows, plus hostile ones.
var fuzzSeeds = []string{
	"",
	okDiff,
	newFileDiff("tests/test_x.py"),
	newFileDiff(".git/hooks/pre-commit"),
	newFileDiff("../../etc/passwd"),
	newFileDiff("node_modules/x/y.js"),
	newFileDiff(".github/workflows/ci.yml"),
	symlinkDiff("l", "/etc"),
	symlinkDiff("a/l", "../b"),
	symlinkDiff("d", "sub") + newFileDiff("d/x"),
	"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
	"diff --git a/x y b/x y\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/x y\t\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-\n",
	"diff --git \"a/\\303\\274\" \"b/\\303\\274\"\nnew file mode 100644\nindex 0000000..e69de29\n",
	"diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/y\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
	"diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n",
	"diff --git a/bin b/bin\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 4\nLcmZ?wcXD<G00aO6\n\nliteral 0\nHcmV?d00001\n\n",
	"diff --git a/s b/s\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n",
}

// FuzzParse checks that Parse never panics and that what it accepts it can write back
// byte for byte and parse again to the same files.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, diff []byte) {
		p, err := Parse(diff)
		if err != nil {
			return
		}
		out := p.Bytes()
		if !bytes.Equal(out, diff) {
			t.Fatalf("Bytes() differs from the input")
		}
		q, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parsing our own output: %v", err)
		}
		if fmt.Sprint(public(p.Files)) != fmt.Sprint(public(q.Files)) {
			t.Fatalf("re-parse gave different files")
		}
	})
}

// FuzzSanitize checks Sanitize's guarantee: whatever it hands back parses, and names
// no path and no symlink that the rules forbid.
func FuzzSanitize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(newFileDiff(".github/workflows/x.yml")), true)
	f.Fuzz(func(t *testing.T, diff []byte, allowWorkflows bool) {
		res, err := Sanitize(diff, Options{AllowWorkflowChanges: allowWorkflows, BaseSymlink: func(string) (string, bool) { return "", false }})
		if err != nil {
			if res != nil && len(res.Diff) > 0 {
				t.Fatalf("refused patch still carries %d bytes", len(res.Diff))
			}
			return
		}
		if len(res.Diff) == 0 {
			return
		}
		p, err := Parse(res.Diff)
		if err != nil {
			t.Fatalf("Sanitize returned a patch that does not parse: %v", err)
		}
		links := map[string]bool{}
		for _, f := range p.Files {
			for _, n := range names(f) {
				if why := checkPath(n); why != "" {
					t.Fatalf("kept forbidden path %q: %s", n, why)
				}
				if !allowWorkflows && isWorkflowPath(n) {
					t.Fatalf("kept workflow path %q", n)
				}
			}
			if f.NewMode == ModeSymlink {
				links[f.NewPath] = true
				if why := checkSymlink(f.NewPath, f.SymlinkTarget); why != "" || f.Binary {
					t.Fatalf("kept symlink %q -> %q: %s", f.NewPath, f.SymlinkTarget, why)
				}
			}
			if f.OldMode == ModeGitlink || f.NewMode == ModeGitlink {
				t.Fatalf("kept a gitlink %q", f.Path())
			}
		}
		for _, f := range p.Files {
			for _, n := range names(f) {
				for d := n; strings.Contains(d, "/"); {
					d = d[:strings.LastIndexByte(d, '/')]
					if links[d] {
						t.Fatalf("kept %q below new symlink %q", n, d)
					}
				}
			}
		}
	})
}

// BenchmarkSanitize measures a 2,000-file diff with litter, about 1 MiB.
func BenchmarkSanitize(b *testing.B) {
	var s strings.Builder
	for i := range 1000 {
		s.WriteString(strings.ReplaceAll(okDiff, "ok.txt", fmt.Sprintf("src/dir%d/file %d.py", i%17, i)))
		s.WriteString(newFileDiff(fmt.Sprintf("src/__pycache__/m%d.pyc", i)))
	}
	diff := []byte(s.String())
	b.SetBytes(int64(len(diff)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Sanitize(diff, Options{MaxBytes: 64 << 20})
		if err != nil || len(res.Files) != 1000 {
			b.Fatalf("Sanitize: %v, %d files", err, len(res.Files))
		}
	}
}
