package server

import (
	"strings"
	"testing"
)

// TestMentionInCodeAsksNothing: GitHub notifies nobody of a mention in a code span or a fenced
// code block, so frognano does not take one as a request; outside code, the same text does.
func TestMentionInCodeAsksNothing(t *testing.T) {
	checkMentions(t, "frognano-app", map[string]bool{
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
	})
}

// FuzzBlankCode: blankCode keeps the length and every line end, and only ever writes spaces.
func FuzzBlankCode(f *testing.F) {
	for _, s := range []string{"`a`", "```\nx\n```", "~~~\n", "`` ` ``", "a\n```go\n`x`\n```\n`y`", "\x00`\xff`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := blankCode(s)
		checkBlanked(t, s, out)
		if !strings.ContainsAny(s, "`~") && !indented(s) && out != s {
			t.Fatal("a text without code changed")
		}
	})
}

// TestMentionGitHubDoesNotLinkAsksNothing: GitHub links (and notifies) a mention only in text:
// not in an indented code block, a link's or an image's text, a tag's attributes, nor in a
// code, pre or a element; frognano takes none of those as a request (before, each asked, and a
// maintainer's "to stop it, write\n\n    @APP stop" stopped the run). Text next to them still
// asks.
func TestMentionGitHubDoesNotLinkAsksNothing(t *testing.T) {
	checkMentions(t, "frognano-app", map[string]bool{
		"to stop it, write\n\n    @frognano-app stop\n":                 false,
		"    @frognano-app go":                                          false,
		"\t@frognano-app go":                                            false,
		"```\nx\n```\n    @frognano-app go":                             false,
		"code:\n\n    a\n\n    @frognano-app go\n":                      false, // a blank line inside the block
		"a paragraph\n    @frognano-app go":                             true,  // a paragraph's line, not code
		"code:\n\n    a\nthen @frognano-app go":                         true,
		"[@frognano-app do this](https://example.com)":                  false,
		"[@frognano-app do this][1]\n\n[1]: https://example.com":        false,
		"![@frognano-app do this](https://example.com/x.png)":           false,
		"<img alt=\"@frognano-app do this\" src=\"x.png\">":             false,
		"<span title='@frognano-app go'>hi</span>":                      false,
		"<code>@frognano-app stop</code>":                               false,
		"<PRE>\n@frognano-app stop\n</PRE>":                             false,
		"<a href=\"x\">@frognano-app go</a>":                            false,
		"<code>unclosed @frognano-app go":                               false,
		"<b>@frognano-app</b> go":                                       true,
		"<code>x</code> @frognano-app go":                               true,
		"[a link](https://example.com) @frognano-app go":                true,
		"see [note] @frognano-app go":                                   true,
		"if a < b then @frognano-app go":                                true,
		"<details><summary>x</summary>\n\n@frognano-app go\n</details>": true, // shown once opened, and notified
	})
}

// FuzzBlankMarkup: unnotified keeps the length and every line end, and only ever writes spaces.
func FuzzBlankMarkup(f *testing.F) {
	for _, s := range []string{"[a](b)", "<code>x", "<a>\n@x</a>", "    x\n\ny", "[[[", "<<<>", "<İcode>x</code>", "\xff<a>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkBlanked(t, s, unnotified(s))
	})
}

// checkBlanked fails t unless out is s with some bytes replaced by spaces: the same length,
// every line end where it was, nothing else written.
func checkBlanked(t *testing.T, s, out string) {
	t.Helper()
	if len(out) != len(s) {
		t.Fatalf("length %d -> %d", len(s), len(out))
	}
	for i := range len(s) {
		if out[i] != s[i] && out[i] != ' ' || (s[i] == '\n') != (out[i] == '\n') {
			t.Fatalf("byte %d: %q -> %q", i, s[i], out[i])
		}
	}
}

// TestMentionIsTheSlugInASCIICase: the App's slug is matched without regard to ASCII case only,
// as GitHub matches a login. Before, the Unicode folding of (?i) took the Kelvin sign for k
// and the long s for s: `@taſk-bot` and `@tas\u212A-bot`, which GitHub neither links nor
// notifies, asked as `@task-bot` does.
func TestMentionIsTheSlugInASCIICase(t *testing.T) {
	checkMentions(t, "task-bot", map[string]bool{
		"@task-bot go":      true,
		"@TASK-Bot go":      true,
		"@TA\u017fK-BOT go": false,
		"@ta\u017fk-bot go": false,
		"@tas\u212a-bot go": false,
	})
}

// checkMentions checks, for each text, whether it mentions the App of slug as want says.
func checkMentions(t *testing.T, slug string, want map[string]bool) {
	t.Helper()
	m := mention(slug)
	for text, w := range want {
		if got := m.MatchString(text); got != w {
			t.Errorf("MatchString(%q) = %v, want %v", text, got, w)
		}
	}
}
