package outcome

import (
	"bufio"
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// patchStats reads a unified diff (a run's patch, as `git diff` wrote it on the host): the
// paths it touches (both sides of a rename) and how many lines it adds and removes. Binary
// files count as touched with no lines. The patch is frognano's own record of what the
// model's diff became after the host's checks; anything unparsable is skipped, not trusted.
func patchStats(patch []byte) (files []string, lines int) {
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || p == "/dev/null" || seen[p] {
			return
		}
		seen[p] = true
		files = append(files, p)
	}
	sc := bufio.NewScanner(bytes.NewReader(patch))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	inHunk := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inHunk = false
			// A file's only name when no ---/+++ lines follow (a binary file, a mode change).
			add(headerPath(l[len("diff --git "):]))
		case !inHunk && strings.HasPrefix(l, "--- "):
			add(diffPath(l[4:]))
		case !inHunk && strings.HasPrefix(l, "+++ "):
			add(diffPath(l[4:]))
		case !inHunk && strings.HasPrefix(l, "rename from "):
			add(unquote(l[len("rename from "):]))
		case !inHunk && strings.HasPrefix(l, "rename to "):
			add(unquote(l[len("rename to "):]))
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case inHunk && (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")):
			lines++
		}
	}
	sort.Strings(files)
	return files, lines
}

// diffPath is the path of a ---/+++ line: "a/x" or "b/x" without its prefix, "/dev/null"
// kept as is (a side that does not exist), a quoted one unquoted, a tab ending cut there.
func diffPath(s string) string {
	if strings.HasPrefix(s, `"`) {
		s = unquote(s)
	} else if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == "/dev/null" {
		return s
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return ""
}

// unquote decodes a path git quoted (core.quotePath: C-style, octal escapes for bytes >= 0x80
// and \t, \n, \", \\ ...), up to its closing quote; an unquoted one is returned as is, one
// that does not decode is "".
func unquote(s string) string {
	if !strings.HasPrefix(s, `"`) {
		return s
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return ""
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return ""
	}
	return v
}

// headerPath is the path a "diff --git a/P b/P" header names when both sides are the same
// path (quoted or not); "" otherwise (a rename or a copy says its paths on lines of their own).
func headerPath(s string) string {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return ""
		}
		a, b := unquote(q), strings.TrimPrefix(s[len(q):], " ")
		if strings.HasPrefix(b, `"`) {
			b = unquote(b)
		}
		if strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return a[2:]
		}
		return ""
	}
	// Unquoted: "a/P b/P", P possibly with spaces; the two halves tell where it is cut.
	if n := len(s); n%2 == 1 {
		a, b := s[:n/2], s[n/2+1:]
		if s[n/2] == ' ' && strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return a[2:]
		}
	}
	return ""
}
