package server

import (
	"strings"
	"testing"
)

// TestMentionInCodeAsksNothing: GitHub notifies nobody of a mention in a code span or a fenced
// code block, so frognano does not take one as a request; outside code, the same text does.
func TestMentionInCodeAsksNothing(t *testing.T) {
	m := mention("frognano-app")
	for text, want := range map[string]bool{
		"@frognano-app fix it":                                    true,
		"use `@frognano-app stop` to stop it":                     false,
		"use ``@frognano-app ` stop`` to stop":                    false,
		"```\n@frognano-app attempts=2\n```":                      false,
		"~~~~md\n@frognano-app go\n~~~\n~~~~\nthen @frognano-app": true,
		"  ```\n@frognano-app\n":                                  false, // unclosed: to the end
		"``` inline ``` @frognano-app":                            true,  // a backtick fence's info has no backtick: this is a span
		"an unclosed ` then @frognano-app":                        true,
		"`a`\n@frognano-app `b`":                                  true,
		"    ```\n@frognano-app":                                  true, // four spaces: not a fence
	} {
		if got := m.MatchString(text); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", text, got, want)
		}
	}
}

// FuzzBlankCode: blankCode keeps the length and every line end, and only ever writes spaces.
func FuzzBlankCode(f *testing.F) {
	for _, s := range []string{"`a`", "```\nx\n```", "~~~\n", "`` ` ``", "a\n```go\n`x`\n```\n`y`", "\x00`\xff`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := blankCode(s)
		if len(out) != len(s) {
			t.Fatalf("length %d -> %d", len(s), len(out))
		}
		for i := range len(s) {
			if out[i] != s[i] && out[i] != ' ' || (s[i] == '\n') != (out[i] == '\n') {
				t.Fatalf("byte %d: %q -> %q", i, s[i], out[i])
			}
		}
		if !strings.ContainsAny(s, "`~") && out != s {
			t.Fatal("a text without code changed")
		}
	})
}
