package clip_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/internal/clip"
)

func TestPrefixNeverSplitsACharacter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Short", "abc", 5, "abc"},
		{"Exact", "abc", 3, "abc"},
		{"ASCII", "abcdef", 4, "abcd"},
		{"Zero", "abc", 0, ""},
		{"Negative", "abc", -1, ""},
		{"TwoByteAtTheCut", "aé", 2, "a"},     // é is 2 bytes: a cut after its first byte backs up
		{"ThreeByteAtTheCut", "ab€", 4, "ab"}, // € is 3 bytes
		{"ThreeByteFits", "ab€", 5, "ab€"},    // exactly
		{"FourByteAtEachCut1", "x😀", 2, "x"},  // 😀 is 4 bytes
		{"FourByteAtEachCut2", "x😀", 3, "x"},  //
		{"FourByteAtEachCut3", "x😀", 4, "x"},  //
		{"OnlyMultiByte", "😀😀", 7, "😀"},       //
		{"InvalidBytesCutWhereTheyStand", "\x80\x80\x80\x80\x80", 2, "\x80\x80"},
		{"InvalidAfterValid", "é\x80\x80\x80\x80", 3, "é\x80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := clip.Prefix(tt.s, tt.max); got != tt.want {
				t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
		})
	}
}

func TestSuffixNeverSplitsACharacter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Short", "abc", 5, "abc"},
		{"Exact", "abc", 3, "abc"},
		{"ASCII", "abcdef", 4, "cdef"},
		{"Zero", "abc", 0, ""},
		{"Negative", "abc", -1, ""},
		{"TwoByteAtTheCut", "éa", 2, "a"},     // the cut falls after é's first byte: it moves past é
		{"ThreeByteAtTheCut", "€ab", 4, "ab"}, // € is 3 bytes
		{"ThreeByteFits", "x€ab", 5, "€ab"},   // exactly
		{"FourByteAtEachCut1", "😀x", 2, "x"},  // 😀 is 4 bytes
		{"FourByteAtEachCut2", "😀x", 3, "x"},  //
		{"FourByteAtEachCut3", "😀x", 4, "x"},  //
		{"OnlyMultiByte", "😀😀", 7, "😀"},       //
		{"InvalidBytesCutWhereTheyStand", "\x80\x80\x80\x80\x80", 2, "\x80\x80"},
		{"InvalidBeforeValid", "\x80\x80\x80\x80é", 3, "\x80é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := clip.Suffix(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Suffix(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if !strings.HasSuffix(tt.s, got) || len(got) > max(tt.max, 0) {
				t.Errorf("Suffix(%q, %d) = %q is not a suffix of at most %d bytes", tt.s, tt.max, got, tt.max)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"Fits", "frognano: fix the pager", 100, "frognano: fix the pager"},
		{"ASCII", "abcdefgh", 6, "abc…"},
		{"MultiByteAtTheCut", "ééééé", 8, "éé…"}, // 4+3 = 7 bytes: the third é would split at byte 5
		{"NoRoomForTheEllipsis", "abcdef", 2, "ab"},
		{"JustTheEllipsis", "abcdef", 3, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := clip.Bytes(tt.s, tt.max)
			if got != tt.want || len(got) > max(tt.max, 0) {
				t.Errorf("Bytes(%q, %d) = %q (%d bytes), want %q", tt.s, tt.max, got, len(got), tt.want)
			}
		})
	}
}

func TestRunesAndTail(t *testing.T) {
	t.Parallel()
	s := "héllo wörld 😀" // 13 characters, 17 bytes
	tests := []struct {
		name     string
		fn       func(string, int) (string, int)
		max      int
		want     string
		wantMore int
	}{
		{"RunesAll", clip.Runes, 20, s, 0},
		{"RunesHead", clip.Runes, 5, "héllo", 8},
		{"RunesBeforeTheEmoji", clip.Runes, 12, "héllo wörld ", 1},
		{"RunesNone", clip.Runes, 0, "", 13},
		{"TailAll", clip.Tail, 13, s, 0},
		{"TailEnd", clip.Tail, 7, "wörld 😀", 6},
		{"TailNone", clip.Tail, -1, "", 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, more := tt.fn(s, tt.max)
			if got != tt.want || more != tt.wantMore {
				t.Errorf("%s(%q, %d) = %q, %d; want %q, %d", tt.name, s, tt.max, got, more, tt.want, tt.wantMore)
			}
		})
	}
}

// FuzzClip: on any input and limit, no cut panics, a cut of valid UTF-8 is valid UTF-8, the
// limits hold, and what is kept is the text's own start (or end) with nothing lost in between.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "aé€😀", "\x80\xff", "é\x80😀\xe2\x82", strings.Repeat("ü", 50)} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 200
		p := clip.Prefix(s, n)
		if !strings.HasPrefix(s, p) || len(p) > max(n, 0) || len(p) < min(len(s), n)-(utf8.UTFMax-1) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
		b := clip.Bytes(s, n)
		if len(b) > max(n, 0) && b != s {
			t.Fatalf("Bytes(%q, %d) = %q is over the limit", s, n, b)
		}
		head, more := clip.Runes(s, n)
		tail, skipped := clip.Tail(s, n)
		if !strings.HasPrefix(s, head) || utf8.RuneCountInString(head)+more != utf8.RuneCountInString(s) {
			t.Fatalf("Runes(%q, %d) = %q, %d", s, n, head, more)
		}
		if !strings.HasSuffix(s, tail) || utf8.RuneCountInString(tail)+skipped != utf8.RuneCountInString(s) {
			t.Fatalf("Tail(%q, %d) = %q, %d", s, n, tail, skipped)
		}
		if utf8.ValidString(s) {
			for _, out := range []string{p, b, head, tail} {
				if !utf8.ValidString(out) {
					t.Fatalf("a cut of valid UTF-8 %q at %d is invalid: %q", s, n, out)
				}
			}
		}
	})
}

func ExampleBytes() {
	fmt.Println(clip.Bytes("frognano: Pager skips the last page", 20))
	fmt.Println(clip.Bytes("ééééé", 8)) // never half a character
	// Output:
	// frognano: Pager s…
	// éé…
}
