// Package clip owns cutting text to a limit. Every place in frognano that shortens a string to
// fit a limit (a log attribute, a database key, an error message quoting untrusted bytes, a pull
// request title, an observation in the PR body, a test run's tail) cuts through here, in bytes
// or in characters, and no cut ever splits a character: cutting valid UTF-8 gives valid UTF-8.
//
// clip must stay free of other frognano packages (every layer imports it) and must never panic,
// whatever the input: it also cuts invalid UTF-8, which it leaves as invalid as it found it.
package clip

import "unicode/utf8"

// Ellipsis ends a text that Bytes cut.
const Ellipsis = "…"

// Prefix returns the longest prefix of s that is at most max bytes long and does not end inside
// a character. A max of 0 or less gives "".
func Prefix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	// Only a character that starts in the last utf8.UTFMax-1 bytes before the cut can reach
	// past it. Bytes that are not part of a valid character are cut where they stand.
	cut := max
	for j := max - 1; j >= 0 && j > max-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if r, size := utf8.DecodeRuneInString(s[j:]); !(r == utf8.RuneError && size <= 1) && j+size > max {
				cut = j
			}
			break
		}
	}
	return s[:cut]
}

// Suffix returns the longest suffix of s that is at most max bytes long and does not start
// inside a character: the end of a program's error output, where it says what went wrong. A
// max of 0 or less gives "".
func Suffix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	// Only a character that starts in the utf8.UTFMax-1 bytes before the cut can reach past
	// it. Bytes that are not part of a valid character are cut where they stand.
	cut := len(s) - max
	for j := cut - 1; j >= 0 && j > cut-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if r, size := utf8.DecodeRuneInString(s[j:]); !(r == utf8.RuneError && size <= 1) && j+size > cut {
				cut = j + size
			}
			break
		}
	}
	return s[cut:]
}

// Bytes returns s when it is at most max bytes long; otherwise the longest prefix that leaves
// room for Ellipsis, and Ellipsis: at most max bytes in all, never a split character. Below
// len(Ellipsis) bytes there is no room for it, and Bytes is Prefix.
func Bytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max < len(Ellipsis) {
		return Prefix(s, max)
	}
	return Prefix(s, max-len(Ellipsis)) + Ellipsis
}

// Runes returns the first max characters of s (all of s when it has no more) and how many
// characters were left out. A max of 0 or less keeps nothing. Invalid bytes count as one
// character each.
func Runes(s string, max int) (head string, more int) {
	i, n := 0, 0
	for i < len(s) && n < max {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	if i == len(s) {
		return s, 0
	}
	return s[:i], utf8.RuneCountInString(s[i:])
}

// Tail returns the last max characters of s (all of s when it has no more) and how many
// characters were left out before them: the end of a test run's output is where the summary is.
func Tail(s string, max int) (tail string, more int) {
	max = maxInt(max, 0)
	total := utf8.RuneCountInString(s)
	if total <= max {
		return s, 0
	}
	skip := total - max
	i := 0
	for k := 0; k < skip; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[i:], skip
}

func maxInt(a, b int) int { return max(a, b) }
