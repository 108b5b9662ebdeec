package scanner

import (
	"sort"
	"strings"
)

// Changed is, per repository path, the lines of the patched file that the patch added or
// changed (git's own view: Added), as sorted, disjoint ranges.
type Changed map[string][]Lines

// Lines is the range of lines First..Last (1-based, inclusive).
type Lines struct{ First, Last int }

// ChangedLines builds Changed from the added lines of the patched tree's diff.
func ChangedLines(frags []Added) Changed {
	c := Changed{}
	for _, f := range frags {
		if f.Path == "" || f.Path == "?" || f.Line < 1 {
			continue
		}
		c[f.Path] = append(c[f.Path], Lines{f.Line, f.Line + strings.Count(f.Text, "\n")})
	}
	for p, rs := range c {
		sort.Slice(rs, func(i, j int) bool { return rs[i].First < rs[j].First })
		merged := rs[:1]
		for _, r := range rs[1:] {
			if last := &merged[len(merged)-1]; r.First <= last.Last+1 {
				last.Last = max(last.Last, r.Last)
			} else {
				merged = append(merged, r)
			}
		}
		c[p] = merged
	}
	return c
}

// Touches reports whether the lines first..last of file include one the patch added or changed.
func (c Changed) Touches(file string, first, last int) bool {
	rs := c[file]
	// The first range that ends at or after first; it must start at or before last.
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Last >= first })
	return i < len(rs) && rs[i].First <= last
}

// Without returns c without the given files (a scanner scanned their base versions, so the
// patch's lines in them are not what it read).
func (c Changed) Without(files []string) Changed {
	if len(files) == 0 {
		return c
	}
	out := make(Changed, len(c))
	for f, rs := range c {
		out[f] = rs
	}
	for _, f := range files {
		delete(out, f)
	}
	return out
}

// WithWhole returns c with every line of the given files changed: files the patch moved, whose
// lines git's renamed view counts as unchanged although the code is new at that path.
func (c Changed) WithWhole(files []string) Changed {
	if len(files) == 0 {
		return c
	}
	out := make(Changed, len(c)+len(files))
	for f, rs := range c {
		out[f] = rs
	}
	for _, f := range files {
		out[f] = []Lines{{1, maxLine}}
	}
	return out
}
