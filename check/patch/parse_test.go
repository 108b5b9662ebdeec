package patch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		diff string
		msg  string // part of the error
	}{
		{"TextBeforeHeader", "From abc\n" + okDiff, `expected a "diff --git" header`},
		{"NoFinalNewline", strings.TrimSuffix(okDiff, "\n"), "does not end with a newline"},
		{"HunkTooShort", strings.Replace(okDiff, "@@ -1 +1 @@", "@@ -1,2 +1 @@", 1) + okDiff, "does not fit the hunk header"},
		{"HunkEndsAtEOF", strings.Replace(okDiff, "@@ -1 +1 @@", "@@ -1 +1,2 @@", 1), "patch ends inside a hunk"},
		{"HunkTooLong", okDiff + "+extra\n", "expected a \"diff --git\" header"},
		{"BadHunkHeader", strings.Replace(okDiff, "@@ -1 +1 @@", "@@ -x +1 @@", 1), "bad hunk start"},
		{"HugeHunkCount", strings.Replace(okDiff, "@@ -1 +1 @@", "@@ -1,99999999999 +1 @@", 1), "bad hunk count"},
		{"NoHunkAfterNames", "diff --git a/x b/x\n--- a/x\n+++ b/x\n", "expected a hunk"},
		{"BinaryWithoutData", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nBinary files a/x and b/x differ\n", "binary change without data"},
		{"BinaryTruncated", "diff --git a/x b/x\nGIT binary patch\nliteral 4\nLcmZ?wcXD<G00aO6\n", "patch ends inside binary data"},
		{"BinaryBadLine", "diff --git a/x b/x\nGIT binary patch\nliteral 4\nLcmZ?w\n\n", "binary line has"},
		{"BinaryBadChar", "diff --git a/x b/x\nGIT binary patch\nliteral 4\nLcmZ?wcXD<G00aO\"\n\n", "bad base85 character"},
		{"UnknownLine", "diff --git a/x b/x\nold mode 100644\nnew mode 100755\nsomething else\n", "unexpected line"},
		{"BadMode", "diff --git a/x b/x\nold mode 100644\nnew mode 100777\n", "unsupported mode"},
		{"OldModeAlone", "diff --git a/x b/x\nold mode 100644\n", `"old mode" without "new mode"`},
		{"RepeatedHeader", "diff --git a/x b/x\nnew file mode 100644\nnew file mode 100644\n", "repeated"},
		{"NewAndDeleted", "diff --git a/x b/x\nnew file mode 100644\ndeleted file mode 100644\n", "both new and deleted"},
		{"RenameAndCopy", "diff --git a/x b/y\nrename from x\ncopy to y\n", "both renamed and copied"},
		{"RenameHalf", "diff --git a/x b/y\nrename from x\n", "rename or copy without both names"},
		{"InconsistentPlus", "diff --git a/ok b/ok\n--- a/ok\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", "new file name"},
		{"InconsistentRename", "diff --git a/x b/y\nrename from x\nrename to z\n", "new file name"},
		{"NamesDifferNoRename", "diff --git a/x b/y\nindex 1234567..89abcde 100644\n", "differ without a rename"},
		{"AmbiguousHeader", "diff --git a/x y b/z w\nindex 1234567..89abcde 100644\n", "cannot tell the file name"},
		{"MissingPrefix", "diff --git x x\n", `lack the "a/" and "b/" prefixes`},
		{"PlusWithoutPrefix", "diff --git a/x b/x\n--- a/x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", `lacks the "b/" prefix`},
		{"DevNullMismatch", "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+b\n", "new-file header"},
		{"BadQuote", "diff --git \"a/x\\q\" \"b/x\\q\"\n", "unknown escape"},
		{"UnterminatedQuote", "diff --git \"a/x b/x\n", "no closing quote"},
		{"ShortOctal", "diff --git \"a/\\05\" \"b/\\05\"\n", "short octal"},
		{"BadIndex", "diff --git a/x b/x\nindex zz..yy 100644\n", "bad object ids"},
		{"BadSimilarity", "diff --git a/x b/y\nsimilarity index 101%\nrename from x\nrename to y\n", "bad percentage"},
		{"StrayNoNewline", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n", "does not fit"},
		{"ColorCodes", "\x1b[1mdiff --git a/x b/x\x1b[m\n", `expected a "diff --git" header`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(tc.diff))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %v, %v; want a *ParseError", p, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to contain %q", err, tc.msg)
			}
			if _, err := Sanitize([]byte(tc.diff), Options{}); !errors.As(err, &pe) {
				t.Errorf("Sanitize error = %v, want the *ParseError", err)
			}
		})
	}
}

func TestParseNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		diff             string
		oldPath, newPath string
	}{
		{"QuotedOctalUTF8", "diff --git \"a/\\303\\274.txt\" \"b/\\303\\274.txt\"\nnew file mode 100644\nindex 0000000..e69de29\n", "", "ü.txt"},
		{"QuotedEscapes", "diff --git \"a/a\\tb\\\"c\\\\d\" \"b/a\\tb\\\"c\\\\d\"\ndeleted file mode 100644\nindex e69de29..0000000\n", "a\tb\"c\\d", ""},
		{"MixedQuoting", "diff --git a/plain \"b/t\\tab\"\nsimilarity index 100%\nrename from plain\nrename to \"t\\tab\"\n", "plain", "t\tab"},
		{"QuotedThenPlain", "diff --git \"a/t\\tab\" b/plain\nsimilarity index 100%\nrename from \"t\\tab\"\nrename to plain\n", "t\tab", "plain"},
		{"SpacesSameName", "diff --git a/x y z b/x y z\nold mode 100644\nnew mode 100755\n", "x y z", "x y z"},
		{"SpacesRename", "diff --git a/x y b/z w\nsimilarity index 90%\nrename from x y\nrename to z w\nindex 1234567..89abcde 100644\n--- a/x y\t\n+++ b/z w\t\n@@ -1 +1 @@\n-a\n+b\n", "x y", "z w"},
		{"NameLooksLikePrefix", "diff --git a/b/x b/b/x\nold mode 100644\nnew mode 100755\n", "b/x", "b/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(tc.diff))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Files) != 1 || p.Files[0].OldPath != tc.oldPath || p.Files[0].NewPath != tc.newPath {
				t.Fatalf("files %+v, want old %q new %q", public(p.Files), tc.oldPath, tc.newPath)
			}
		})
	}
}

func TestParseCountsChangedLines(t *testing.T) {
	t.Parallel()
	diff := newFileDiff("tests/test_new.py") +
		"diff --git a/pkg/x_test.go b/pkg/x_test.go\nindex 1234567..89abcde 100644\n--- a/pkg/x_test.go\n+++ b/pkg/x_test.go\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/test_old.py b/test_old.py\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/test_old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n" +
		"diff --git a/src/app.spec.ts b/src/moved.ts\nsimilarity index 100%\nrename from src/app.spec.ts\nrename to src/moved.ts\n" +
		"diff --git a/src/main.go b/src/main.go\nindex 1234567..89abcde 100644\n--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@\n-a\n+b\n"
	p, err := Parse([]byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	added, deleted := 0, 0
	for _, f := range p.Files {
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	if added != 3 || deleted != 3 {
		t.Errorf("added %d, deleted %d lines; want 3, 3", added, deleted)
	}
}

func TestIsTestPath(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"test_x.py": true, "pkg/x_test.py": true, "conftest.py": true, "x_test.go": true,
		"tests/helpers.py": true, "src/test/java/AppTest.java": true, "a/__tests__/b.js": true,
		"web/app.test.js": true, "web/app.spec.ts": true, "lib/x_spec.rb": true, "pkg/testdata/golden.txt": true,
		"main.go": false, "testing.go": false, "src/contest.py": false, "latest/x.py": false, "attest.js": false,
	}
	for p, want := range tests {
		if got := IsTestPath(p); got != want {
			t.Errorf("IsTestPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSanitizeTooLarge(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 50 {
		b.WriteString(newFileDiff(fmt.Sprintf("f%02d.txt", i)))
	}
	diff := []byte(b.String())
	res, err := Sanitize(diff, Options{MaxBytes: int64(len(diff) - 1)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TooLarge || len(res.Diff) != 0 || len(res.Files) != 50 || res.Size != int64(len(diff)) {
		t.Errorf("TooLarge=%v len(Diff)=%d files=%d size=%d", res.TooLarge, len(res.Diff), len(res.Files), res.Size)
	}
	if _, err := Sanitize(make([]byte, MaxInputBytes+1), Options{}); err == nil {
		t.Error("a raw diff over MaxInputBytes was accepted")
	}
	res, err = Sanitize(diff, Options{MaxBytes: int64(len(diff))})
	if err != nil || res.TooLarge || string(res.Diff) != string(diff) {
		t.Errorf("a patch of exactly MaxBytes was not kept whole: %v", err)
	}
}

func TestSanitizeEmpty(t *testing.T) {
	t.Parallel()
	res, err := Sanitize(nil, Options{})
	if err != nil || res.Diff != nil || len(res.Files) != 0 || res.TooLarge {
		t.Errorf("Sanitize(nil) = %+v, %v", res, err)
	}
	res, err = Sanitize([]byte(newFileDiff("__pycache__/x.pyc")), Options{})
	if err != nil || res.Diff != nil || len(res.Dropped) != 1 {
		t.Errorf("litter only: %+v, %v", res, err)
	}
}

// TestErrorsQuoteWholeCharacters: an error quoting a long untrusted line cuts it at a character
// boundary (clip.Bytes), so the message shows "é", never an escaped half of it.
func TestErrorsQuoteWholeCharacters(t *testing.T) {
	t.Parallel()
	// 80 bytes with the ellipsis: 77 of the line, and byte 77 falls inside the first é.
	line := strings.Repeat("x", 76) + "ééé"
	_, err := Parse([]byte(line + "\n"))
	if err == nil {
		t.Fatal("Parse accepted a line that is not a diff")
	}
	if msg := err.Error(); strings.Contains(msg, `\x`) || !strings.Contains(msg, `"`+strings.Repeat("x", 76)+`…"`) {
		t.Errorf("error = %q, want the line cut before the é, with an ellipsis", msg)
	}
}
