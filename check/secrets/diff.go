package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/frognano/frognano/check/patch"
)

// Fragment is a run of consecutive lines a patch adds to one file: Line is the number of its
// first line in the new file (1-based), Text the lines joined by "\n".
type Fragment struct {
	Path string
	Line int
	Text string
}

// Added returns the added lines of a unified diff with zero context, as `git diff -U0 --text`
// writes it, one Fragment per hunk's run of added lines. The diff is only parsed, never
// trusted to be well formed: a line it cannot place is skipped, a file whose name it cannot
// read is named "?", and it never panics.
func Added(diff []byte) []Fragment {
	var (
		out            []Fragment
		path           string
		oldLeft, nLeft int // lines of the current hunk still to come
		cur            *Fragment
		next           int // the new file's number of the next added line
		lines          []string
	)
	flush := func() {
		if cur != nil && len(lines) > 0 {
			cur.Text = strings.Join(lines, "\n")
			out = append(out, *cur)
		}
		cur, lines = nil, nil
	}
	for len(diff) > 0 {
		var line []byte
		if i := bytes.IndexByte(diff, '\n'); i >= 0 {
			line, diff = diff[:i], diff[i+1:]
		} else {
			line, diff = diff, nil
		}
		s := string(line)
		if oldLeft > 0 || nLeft > 0 {
			switch {
			case strings.HasPrefix(s, "+") && nLeft > 0:
				if cur == nil {
					cur = &Fragment{Path: path, Line: next}
				}
				lines = append(lines, s[1:])
				nLeft--
				next++
				continue
			case strings.HasPrefix(s, "-") && oldLeft > 0:
				oldLeft--
				flush()
				continue
			case strings.HasPrefix(s, `\`): // "\ No newline at end of file"
				continue
			}
			// A line that does not fit the hunk's counts ends it.
			oldLeft, nLeft = 0, 0
		}
		flush()
		switch {
		case strings.HasPrefix(s, "diff --git "):
			path = "?"
		case strings.HasPrefix(s, "+++ "):
			path = newPath(s[len("+++ "):])
		case strings.HasPrefix(s, "@@ "):
			o, n, start, ok := hunkHeader(s)
			if ok && path != "" {
				oldLeft, nLeft, next = o, n, start
			}
		}
	}
	flush()
	return out
}

// newPath reads the name of a "+++ " line: "/dev/null" (a deletion) gives "", a quoted name is
// unquoted (git's C quoting is Go's), and the "b/" prefix goes. git ends the line of a name
// that holds a space with a tab (for GNU patch), quoted or not, which is not part of the name:
// an unquoted name never holds a tab (git quotes such a name), so it ends at the first one. Before,
// the tab stayed in the name, and the scanners' findings in a file whose name has a space
// matched no changed line and were dropped.
func newPath(s string) string {
	if s == "/dev/null" {
		return ""
	}
	if !strings.HasPrefix(s, `"`) {
		s, _, _ = strings.Cut(s, "\t")
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(strings.TrimSuffix(s, "\t"))
		if err != nil {
			return "?"
		}
		s = u
	}
	if p, ok := strings.CutPrefix(s, "b/"); ok && p != "" {
		return p
	}
	return "?"
}

// hunkHeader reads "@@ -a[,b] +c[,d] @@...": the old and new line counts and the new start.
func hunkHeader(s string) (oldN, newN, start int, ok bool) {
	f := strings.Fields(s)
	if len(f) < 4 || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, false
	}
	_, oldN, ok1 := hunkRange(f[1][1:])
	start, newN, ok2 := hunkRange(f[2][1:])
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	return oldN, newN, start, true
}

func hunkRange(s string) (start, n int, ok bool) {
	a, b, comma := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start > 1<<30 {
		return 0, 0, false
	}
	n = 1
	if comma {
		if n, err = strconv.Atoi(b); err != nil || n < 0 || n > 1<<30 {
			return 0, 0, false
		}
	}
	return start, n, true
}

// AddedLines applies diff to base in the host's clone (a throwaway index and object directory)
// and returns the lines the patched tree adds or changes, git's own view of them.
// check/scanner keeps its findings to them. (Scan reads more: every changed file whole.)
func AddedLines(ctx context.Context, git patch.Git, base string, diff []byte) ([]Fragment, error) {
	added, err := addedLines(ctx, git, base, diff)
	if err != nil {
		return nil, err
	}
	return Added(added), nil
}

// addedLines applies diff to base in a throwaway index and object directory (the clone's
// objects are read through an alternate, so the clone is not modified) and returns git's
// zero-context diff of the patched tree against base, binary content read as text. Renames are
// followed, so a moved file counts by its changed lines only.
func addedLines(ctx context.Context, git patch.Git, base string, diff []byte) ([]byte, error) {
	if len(diff) == 0 {
		return nil, nil
	}
	sc, err := patch.NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	if err := sc.Apply(ctx, git, diff); err != nil {
		var ae *patch.ApplyError
		if errors.As(err, &ae) {
			return nil, errors.New("git could not apply the patch to read its lines")
		}
		return nil, err
	}
	out, err := git(ctx, sc.Env, nil, "diff", "--cached", "--text", "--unified=0", "--no-color",
		"--no-ext-diff", "--no-textconv", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", base)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	return out, nil
}
