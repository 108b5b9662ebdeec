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
	// New exists only after (whatever its result); Removed exists only before.
	New, Removed []string
	// Counts over every key, subtests included.
	BeforeFailed, AfterFailed, AfterPassed int
	// PerTest is false when either run has no per-test results: the lists are then
	// empty and the caller judges by Outcome.Failed.
	PerTest bool
}

// Compare lines up two runs test by test. A key present on one side only is matched
// against its family on the other: a package that failed to build before ("pkg") and
// whose tests pass after ("pkg.TestX") is Fixed, and its tests are not New; a test
// whose package failed to build after is covered by the package's Broken entry
// rather than listed as Removed.
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
	keys := union(b.keys, a.keys)
	for _, k := range keys {
		bs, bk := b.lookup(k)
		as, ak := a.lookup(k)
		switch {
		case bk == covered || ak == covered:
		case bk == absent:
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

// lookup finds k's status: its own, or (when only its descendants "k.x" or "k/x" are
// present) fail if any of them fails and pass otherwise. k is covered when an
// ancestor stands alone for its family: a package that failed to build, or a test
// that stopped before starting its subtests.
func (ix index) lookup(k string) (Status, presence) {
	if s, ok := ix.tests[k]; ok {
		return s, found
	}
	for i := 1; i < len(k); i++ {
		if k[i] == '.' || k[i] == '/' {
			if _, ok := ix.tests[k[:i]]; ok {
				if !ix.hasFamily(k[:i]) {
					return "", covered
				}
			}
		}
	}
	if st, any := ix.family(k); any {
		return st, found
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

// family reports whether keys below k exist, and fail if any of them fails.
func (ix index) family(k string) (Status, bool) {
	st, any := Pass, false
	for _, sep := range []string{".", "/"} {
		prefix := k + sep
		for i := sort.SearchStrings(ix.keys, prefix); i < len(ix.keys) && strings.HasPrefix(ix.keys[i], prefix); i++ {
			any = true
			if ix.tests[ix.keys[i]] == Fail {
				st = Fail
			}
		}
	}
	return st, any
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
