package verify

import (
	"sort"
	"strings"
)

// Comparison is the difference between the run before the agent's change and the run
// after it. Lists are sorted test keys.
type Comparison struct {
	// Fixed failed before and passes after; Broken did not fail before and fails
	// after; StillFailing fails in both.
	Fixed, Broken, StillFailing []string
	// New has a result only after (whatever it is): added, or not run before because
	// its package failed as a whole. Removed has a result only before.
	New, Removed []string
	// Counts over every key, subtests included.
	BeforeFailed, AfterFailed, AfterPassed int
	// PerTest is false when either run has no per-test results: the lists are then
	// empty and the caller judges by Outcome.Failed.
	PerTest bool
}

// Compare lines up two runs test by test. A key present on one side only is matched
// against its family on the other side. A package that failed as a whole ("pkg": it
// did not build, or pytest could not import the module) and whose tests have results
// on the other side counts as passing there, so a package that builds again is Fixed
// and one that stops building is Broken. Its tests then appear as New when they first
// have results after (whatever their result), and are not listed as Removed when they
// only stopped running because their package broke.
func Compare(before, after Outcome) Comparison {
	c := Comparison{
		BeforeFailed: count(before.Tests, Fail),
		AfterFailed:  count(after.Tests, Fail),
		AfterPassed:  count(after.Tests, Pass),
	}
	if before.Tests == nil || after.Tests == nil {
		return c
	}
	c.PerTest = true
	b, a := newIndex(before.Tests), newIndex(after.Tests)
	for _, k := range union(b.keys, a.keys) {
		bs, bk := b.lookup(k)
		as, ak := a.lookup(k)
		switch {
		case ak == covered:
			// Did not run after because its package failed; the package is listed.
		case bk != found:
			c.New = append(c.New, k)
		case ak == absent:
			c.Removed = append(c.Removed, k)
		case bs == Fail && as == Fail:
			c.StillFailing = append(c.StillFailing, k)
		case bs == Fail && as == Pass:
			c.Fixed = append(c.Fixed, k)
		case bs != Fail && as == Fail:
			c.Broken = append(c.Broken, k)
		}
	}
	return c
}

func count(tests map[string]Status, s Status) int {
	n := 0
	for _, v := range tests {
		if v == s {
			n++
		}
	}
	return n
}

type presence int

const (
	absent  presence = iota
	found            // the key itself, or its descendants
	covered          // an ancestor key stands for it
)

type index struct {
	tests map[string]Status
	keys  []string // sorted
}

func newIndex(tests map[string]Status) index {
	keys := make([]string, 0, len(tests))
	for k := range tests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return index{tests: tests, keys: keys}
}

// lookup finds k's status: its own; covered when an ancestor key with no other
// descendants stands for its whole family (a package that failed as a whole); or, when
// only keys below k exist, Pass: k's own failure is gone.
func (ix index) lookup(k string) (Status, presence) {
	if s, ok := ix.tests[k]; ok {
		return s, found
	}
	for i := 1; i < len(k); i++ {
		if k[i] == '.' || k[i] == '/' {
			if _, ok := ix.tests[k[:i]]; ok && !ix.hasFamily(k[:i]) {
				return "", covered
			}
		}
	}
	if ix.hasFamily(k) {
		return Pass, found
	}
	return "", absent
}

// hasFamily reports whether any key lies below k, in O(log n).
func (ix index) hasFamily(k string) bool {
	for _, sep := range []string{".", "/"} {
		prefix := k + sep
		if i := sort.SearchStrings(ix.keys, prefix); i < len(ix.keys) && strings.HasPrefix(ix.keys[i], prefix) {
			return true
		}
	}
	return false
}

func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
