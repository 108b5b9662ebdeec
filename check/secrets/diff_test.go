package secrets

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestAdded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, diff string
		want       []Fragment
	}{
		{"NewFile", "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n",
			[]Fragment{{"x", 1, "one\ntwo"}}},
		{"ChangedLine", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -3 +3 @@\n-old\n+new\n@@ -9,0 +10 @@\n+added\n",
			[]Fragment{{"x", 3, "new"}, {"x", 10, "added"}}},
		{"PlusPlusPlusInsideAHunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1,2 @@\n+++ b/evil\n+ok\n",
			[]Fragment{{"x", 1, "++ b/evil\nok"}}},
		{"Deletion", "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n", nil},
		{"QuotedName", "diff --git \"a/t\\303\\251\" \"b/t\\303\\251\"\n--- \"a/t\\303\\251\"\n+++ \"b/t\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n",
			[]Fragment{{"té", 1, "b"}}},
		{"NameWithASpace", "diff --git a/a b b/a b\n--- a/a b\t\n+++ b/a b\t\n@@ -1 +1 @@\n-a\n+b\n", []Fragment{{"a b", 1, "b"}}},
		{"QuotedNameWithASpace", "diff --git \"a/\\303\\251 x\" \"b/\\303\\251 x\"\n+++ \"b/\\303\\251 x\"\t\n@@ -1 +1 @@\n-a\n+b\n",
			[]Fragment{{"é x", 1, "b"}}},
		{"NoNewlineMarker", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
			[]Fragment{{"x", 1, "b"}}},
		{"TwoFiles", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -2,0 +3 @@\n+c\n",
			[]Fragment{{"x", 1, "b"}, {"y", 3, "c"}}},
		{"HunkBeyondItsCounts", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1 @@\n+a\n+stray\n", []Fragment{{"x", 1, "a"}}},
		{"GarbageHeader", "diff --git a/x b/x\n+++ b/x\n@@ -a +b @@\n+x\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Added([]byte(tc.diff)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Added:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// FuzzAdded: whatever git's diff holds, Added never panics and every line it returns is one of
// the input's lines without its first byte, in a file named by the diff or "?".
func FuzzAdded(f *testing.F) {
	f.Add([]byte("diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n"))
	f.Add([]byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -3 +3 @@\n-old\n+new\n@@ -9,0 +10 @@\n+added\n"))
	f.Add([]byte("diff --git \"a/t\\303\\251\" \"b/t\\303\\251\"\n--- \"a/t\\303\\251\"\n+++ \"b/t\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n"))
	f.Add([]byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1,2 @@\n+++ b/evil\n+\x00\xff\n"))
	f.Add([]byte("@@ -1 +1,99999999999 @@\n+x"))
	f.Fuzz(func(t *testing.T, diff []byte) {
		lines := map[string]bool{}
		for _, l := range strings.Split(string(diff), "\n") {
			if strings.HasPrefix(l, "+") {
				lines[l[1:]] = true
			}
		}
		for _, fr := range Added(diff) {
			if fr.Path == "" || fr.Line < 0 {
				t.Fatalf("fragment %+v", fr)
			}
			for _, l := range strings.Split(fr.Text, "\n") {
				if !lines[l] {
					t.Fatalf("line %q is not an added line of the input", l)
				}
			}
		}
	})
}

// TestAddedLinesOfOddNames: git's diff of the patched tree names each file as it is, whatever
// its name: a space (git ends the +++ line with a tab then, quoted or not), a tab, a newline,
// quotes, a backslash, '#', non-ASCII. Before, a name with a space kept git's tab, so the
// suppression comments of such a file were listed under a wrong name and the scanners'
// findings in it, which name the file as it is, matched no changed line and were dropped.
func TestAddedLinesOfOddNames(t *testing.T) {
	t.Parallel()
	names := []string{"a file.py", "tab\there.py", "new\nline.py", `quo"te's.py`, `back\slash.py`, "hash#?.py", "ünï cødé.py", "  lead.py"}
	files := map[string]string{}
	for _, n := range names {
		files[n] = "x = 1  # nosec\n"
	}
	b := setup(t, readme)
	frags, err := AddedLines(context.Background(), b.git, b.base, b.change(t, files))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range frags {
		if f.Line != 1 || f.Text != "x = 1  # nosec" {
			t.Errorf("fragment %+v", f)
		}
		got = append(got, f.Path)
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("paths %q, want %q", got, names)
	}
}
