package runner

import (
	"fmt"
	"sort"

	"github.com/frognano/frognano/check/patch"
)

// score is what selection knows of one attempt: only what frognano's own test runs and the
// checked patch say, never what the model claims.
type score struct {
	k          int  // the attempt's number, from 1
	usable     bool // a non-empty patch that was kept, and the attempt was not cancelled
	fixesAll   bool // fixes everything that failed before and breaks nothing
	fixed      int
	broken     int
	editsTests bool // changes or deletes an existing test file
	size       int
}

// scoreOf reads one attempt's result; a nil result (the attempt could not be carried out)
// scores as unusable.
func scoreOf(k int, r *Result) score {
	s := score{k: k}
	if r == nil || r.Cancelled {
		return s
	}
	p := r.PatchBytes()
	s.usable, s.size = len(p) > 0, len(p)
	if !s.usable {
		return s
	}
	for _, f := range r.Patch.Files {
		if f.Status == patch.StatusAdded {
			continue
		}
		if _, ok := f.AffectsTests(); ok {
			s.editsTests = true
		}
	}
	before, after := r.TestsBefore, r.TestsAfter
	if before == nil || after == nil || before.Error != "" || after.Error != "" {
		return s // not verified: it fixes nothing frognano saw
	}
	if c := r.Comparison; c != nil && c.PerTest {
		s.fixed, s.broken = len(c.Fixed), len(c.Broken)
		s.fixesAll = s.fixed > 0 && s.broken == 0 && len(c.StillFailing) == 0 && after.ExitCode == 0
		return s
	}
	// No per-test results: judged by the exit codes.
	switch {
	case before.ExitCode != 0 && after.ExitCode == 0:
		s.fixed, s.fixesAll = 1, true
	case before.ExitCode == 0 && after.ExitCode != 0:
		s.broken = 1
	}
	return s
}

// better reports whether a ranks above b, and the name of the rule that decided.
func better(a, b score) (bool, string) {
	switch {
	case a.usable != b.usable:
		return a.usable, "usable"
	case a.fixesAll != b.fixesAll:
		return a.fixesAll, "fixesAll"
	case a.fixed != b.fixed:
		return a.fixed > b.fixed, "fixed"
	case a.broken != b.broken:
		return a.broken < b.broken, "broken"
	case a.editsTests != b.editsTests:
		return !a.editsTests, "editsTests"
	case a.size != b.size:
		return a.size < b.size, "size"
	}
	return a.k < b.k, "earlier"
}

// rank orders the attempts best first, deterministically (the attempt number breaks every
// tie), and says in one line why the first won.
func rank(results []*Result) (order []int, why string) {
	scores := make([]score, len(results))
	for i, r := range results {
		scores[i] = scoreOf(i+1, r)
		order = append(order, i)
	}
	sort.SliceStable(order, func(i, j int) bool {
		ok, _ := better(scores[order[i]], scores[order[j]])
		return ok
	})
	if len(order) == 0 {
		return nil, ""
	}
	w := scores[order[0]]
	if len(order) == 1 {
		return order, "the only attempt"
	}
	r := scores[order[1]]
	_, rule := better(w, r)
	return order, reason(rule, w, r, scores)
}

func reason(rule string, w, r score, all []score) string {
	switch rule {
	case "usable":
		return fmt.Sprintf("attempt %d is the only one with a usable patch", w.k)
	case "fixesAll":
		if w.fixesAll {
			return fmt.Sprintf("attempt %d fixes every test that failed before and breaks none; the next best, attempt %d, does not", w.k, r.k)
		}
	case "fixed":
		return fmt.Sprintf("attempt %d fixes %d failing test(s), more than any other (the next best, attempt %d, fixes %d)", w.k, w.fixed, r.k, r.fixed)
	case "broken":
		return fmt.Sprintf("attempt %d fixes as much as attempt %d and breaks fewer tests (%d against %d)", w.k, r.k, w.broken, r.broken)
	case "editsTests":
		return fmt.Sprintf("attempt %d ties with attempt %d on the tests and leaves the existing tests alone; attempt %d edits them", w.k, r.k, r.k)
	case "size":
		return fmt.Sprintf("attempt %d ties with attempt %d on the tests and has the smaller patch (%d bytes against %d)", w.k, r.k, w.size, r.size)
	case "earlier":
		if !w.usable {
			return fmt.Sprintf("no attempt produced a usable patch; attempt %d is reported", w.k)
		}
		return fmt.Sprintf("attempts %d and %d tie on the tests and the patch size; the earlier one is chosen", w.k, r.k)
	}
	return fmt.Sprintf("attempt %d ranks first", w.k)
}

// PassesTests reports whether the run's (chosen attempt's) patch passed the tests: a kept
// patch whose after-run succeeded and broke nothing. Escalation (Models.EscalateTo) tries a
// second model when it does not.
func (r *Result) PassesTests() bool {
	s := scoreOf(1, r)
	return s.usable && s.broken == 0 && r.TestsAfter != nil && r.TestsAfter.Error == "" && r.TestsAfter.ExitCode == 0
}
