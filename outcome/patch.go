package outcome

import (
	"bufio"
	"bytes"
	"sort"
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
		case !inHunk && strings.HasPrefix(l, "--- "):
			add(diffPath(l[4:]))
		case !inHunk && strings.HasPrefix(l, "+++ "):
			add(diffPath(l[4:]))
		case !inHunk && strings.HasPrefix(l, "rename from "):
			add(l[len("rename from "):])
		case !inHunk && strings.HasPrefix(l, "rename to "):
			add(l[len("rename to "):])
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
// kept as is (a side that does not exist), anything quoted or with a tab ending cut there.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
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
