package secrets

import (
	"strings"
	"testing"
)

func TestWideText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		lines          []int
	}{
		{"None", "plain text\nno NUL\n", "", nil},
		{"LittleEndianWithBOM", "\xff\xfe" + utf16Text("key=value1\nnext line\n", false)[2:], "key=value1\nnext line\n\n", []int{1, 2, 3}},
		{"BigEndian", utf16Text("key=value1", true), "key=value1\n", []int{1}},
		{"ShortRunsSkipped", "a\x00b\x00c\x00\x01\x02", "", nil},
		{"AfterLinesOfBinary", "\x01\n\x02\n" + utf16Text("abcdefghij", true), "abcdefghij\n", []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, lines := wideText([]byte(tc.in))
			// Each reading is listed (one byte order read one byte on is the other, less a
			// character); the right one is among them, on the right lines.
			i := strings.Index(got, tc.want)
			if i < 0 || (tc.want == "") != (got == "") {
				t.Fatalf("wideText = %q, want it to hold %q", got, tc.want)
			}
			first := strings.Count(got[:i], "\n")
			for k, l := range tc.lines {
				if first+k >= len(lines) || lines[first+k] != l {
					t.Errorf("lines %v from %d, want %v", lines, first, tc.lines)
					break
				}
			}
		})
	}
}

// FuzzWideText: wideText never panics, spells only ASCII, and names a line of the input for every
// line of its text but the empty last one.
func FuzzWideText(f *testing.F) {
	f.Add([]byte("\xff\xfek\x00e\x00y\x00=\x00v\x00a\x00l\x00u\x00e\x00\n\x00"))
	f.Add([]byte("\x00k\x00e\x00y\x00=\x00v\x00a\x00l\x00u\x00e"))
	f.Add([]byte("\n\n\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, lines := wideText(in)
		if got == "" {
			return
		}
		max := strings.Count(string(in), "\n") + 1
		if n := strings.Count(got, "\n"); len(lines) != n {
			t.Fatalf("%d lines listed for %d lines of text %q", len(lines), n, got)
		}
		for _, l := range lines {
			if l < 1 || l > max {
				t.Fatalf("line %d of an input of %d lines", l, max)
			}
		}
		for _, c := range []byte(got) {
			if c >= 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				t.Fatalf("byte %#x in %q", c, got)
			}
		}
	})
}
