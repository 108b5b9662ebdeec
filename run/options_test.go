package run

import (
	"errors"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       Options
		rest       string
		errName    string // the option an *OptionError names; "" no error
	}{
		{"none", "fix the flaky test", Options{}, "fix the flaky test", ""},
		{"empty", "  ", Options{}, "", ""},
		{"all", "base=release/1.2 attempts=3 model=big-2 fix it\nplease", Options{Base: "release/1.2", Attempts: 3, Model: "big-2"}, "fix it\nplease", ""},
		{"only options", "attempts=2", Options{Attempts: 2}, "", ""},
		{"options end at the first other word", "model=m look at x=1 too", Options{Model: "m"}, "look at x=1 too", ""},
		{"double dash ends them", "attempts=2 -- x=1 is wrong", Options{Attempts: 2}, "x=1 is wrong", ""},
		{"double dash alone", "-- base=main is gone", Options{}, "base=main is gone", ""},
		{"newlines between", "base=dev\n\nattempts=1\nDo it.", Options{Base: "dev", Attempts: 1}, "Do it.", ""},
		{"upper case name is text", "Base=dev fix", Options{}, "Base=dev fix", ""},
		{"unknown", "atempts=3 fix", Options{}, "", "atempts"},
		{"twice", "base=a base=b", Options{}, "", "base"},
		{"no value", "model= fix", Options{}, "", "model"},
		{"attempts zero", "attempts=0", Options{}, "", "attempts"},
		{"attempts too many", "attempts=21", Options{}, "", "attempts"},
		{"attempts not a number", "attempts=two", Options{}, "", "attempts"},
		{"attempts sign", "attempts=+2", Options{}, "", "attempts"},
		{"base option-like", "base=-x", Options{}, "", "base"},
		{"base revision expression", "base=main@{1}", Options{}, "", "base"},
		{"base dots", "base=a..b", Options{}, "", "base"},
		{"base lock", "base=main.lock", Options{}, "", "base"},
		{"base hidden", "base=.x", Options{}, "", "base"},
		{"base non-ASCII", "base=mäin", Options{}, "", "base"},
		// frognano's own branches hold a patch: their allow-lists, scanner settings and setup
		// script are a model's (IsOwnBranch).
		{"base is frognano's branch", "base=frognano/issue-12 fix", Options{}, "", "base"},
		{"base is frognano's branch in other letters", "base=FrogNano/Issue-12 fix", Options{}, "", "base"},
		{"base near frognano's branch", "base=frognano/issue-12-notes fix", Options{Base: "frognano/issue-12-notes"}, "fix", ""},
		{"model bad", "model=a/b", Options{}, "", "model"},
		{"model too long", "model=" + strings.Repeat("m", 65), Options{}, "", "model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, err := ParseOptions(tc.text)
			if tc.errName != "" {
				var oe *OptionError
				if !errors.As(err, &oe) || oe.Name != tc.errName {
					t.Fatalf("ParseOptions(%q) = %+v, %q, %v; want an error naming %q", tc.text, got, rest, err, tc.errName)
				}
				if !strings.Contains(err.Error(), tc.errName) {
					t.Errorf("error %q does not name %q", err, tc.errName)
				}
				return
			}
			if err != nil || got != tc.want || rest != tc.rest {
				t.Errorf("ParseOptions(%q) = %+v, %q, %v; want %+v, %q", tc.text, got, rest, err, tc.want, tc.rest)
			}
			if err := got.Check(); err != nil {
				t.Errorf("Check of parsed options: %v", err)
			}
		})
	}
}

func TestOptionsCheck(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{Base: "a b"}, {Attempts: -1}, {Attempts: MaxAskedAttempts + 1}, {Model: "x y"}, {Base: strings.Repeat("b", 256)}, {Base: "frognano/issue-3"}, {Base: "FROGNANO/ISSUE-3"}} {
		if err := o.Check(); err == nil {
			t.Errorf("Check(%+v) = nil", o)
		}
	}
	if err := (Options{Base: "main", Attempts: 1, Model: "frognano-4b"}).Check(); err != nil {
		t.Error(err)
	}
	if !(Options{}).IsZero() || (Options{Attempts: 1}).IsZero() {
		t.Error("IsZero")
	}
}

// FuzzParseOptions: any text parses or fails with an *OptionError; what parses is valid, and
// the instructions are a suffix of the text.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"base=main attempts=2 model=m fix", "-- x", "attempts=99", "base=a..b", "model=\u00e9", "x=1", "\t\nbase=a\u00a0b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		o, rest, err := ParseOptions(text)
		if err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v is not an *OptionError", err)
			}
			return
		}
		if err := o.Check(); err != nil {
			t.Fatalf("parsed %+v fails Check: %v", o, err)
		}
		if !strings.HasSuffix(strings.TrimSpace(text), rest) {
			t.Fatalf("instructions %q are not the end of %q", rest, text)
		}
	})
}
