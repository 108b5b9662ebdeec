package runner

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner/verify"
)

// attemptResult builds a verified attempt: a patch of size bytes touching files, and the
// after-run's comparison.
func attemptResult(size int, fixed, broken, still int, files ...patch.File) *Result {
	r := &Result{
		TestCommand: "python3 -m pytest -q",
		Patch:       &patch.Checked{Diff: []byte(strings.Repeat("x", size)), Files: files},
		TestsBefore: &TestRun{Outcome: verify.Outcome{ExitCode: 1}},
		TestsAfter:  &TestRun{Outcome: verify.Outcome{ExitCode: 0}, PatchApplied: true},
		Comparison:  &verify.Comparison{PerTest: true},
	}
	if size == 0 {
		r.Patch.Diff = nil
	}
	for i := 0; i < fixed; i++ {
		r.Comparison.Fixed = append(r.Comparison.Fixed, "t")
	}
	for i := 0; i < broken; i++ {
		r.Comparison.Broken = append(r.Comparison.Broken, "t")
	}
	for i := 0; i < still; i++ {
		r.Comparison.StillFailing = append(r.Comparison.StillFailing, "t")
	}
	if broken+still > 0 {
		r.TestsAfter.ExitCode = 1
	}
	return r
}

func TestRankAttempts(t *testing.T) {
	t.Parallel()
	src := patch.File{NewPath: "stats/basic.py", OldPath: "stats/basic.py", Status: patch.StatusModified}
	oldTest := patch.File{NewPath: "tests/test_basic.py", OldPath: "tests/test_basic.py", Status: patch.StatusModified}
	newTest := patch.File{NewPath: "tests/test_new.py", Status: patch.StatusAdded}
	tests := []struct {
		name    string
		results []*Result
		want    []int // attempt numbers, best first
		why     string
	}{
		{name: "FixesAllFirst", results: []*Result{attemptResult(10, 1, 0, 1, src), attemptResult(500, 2, 0, 0, src), attemptResult(5, 0, 0, 2, src)},
			want: []int{2, 1, 3}, why: "attempt 2 fixes every test that failed before and breaks none"},
		{name: "FixesMoreBeatsSmaller", results: []*Result{attemptResult(10, 1, 1, 0, src), attemptResult(50, 2, 1, 0, src)},
			want: []int{2, 1}, why: "attempt 2 fixes 2 failing test(s)"},
		{name: "FewerBroken", results: []*Result{attemptResult(10, 2, 2, 0, src), attemptResult(50, 2, 1, 0, src)},
			want: []int{2, 1}, why: "breaks fewer tests (1 against 2)"},
		{name: "NoEditsToExistingTests", results: []*Result{attemptResult(10, 2, 0, 0, src, oldTest), attemptResult(50, 2, 0, 0, src, newTest)},
			want: []int{2, 1}, why: "leaves the existing tests alone"},
		{name: "SmallerPatch", results: []*Result{attemptResult(50, 2, 0, 0, src), attemptResult(10, 2, 0, 0, src)},
			want: []int{2, 1}, why: "smaller patch (10 bytes against 50)"},
		{name: "EarlierOnTie", results: []*Result{attemptResult(10, 2, 0, 0, src), attemptResult(10, 2, 0, 0, src)},
			want: []int{1, 2}, why: "the earlier one is chosen"},
		{name: "EmptyAndFailedLast", results: []*Result{nil, attemptResult(0, 0, 0, 0), attemptResult(10, 0, 1, 2, src), {Cancelled: true}},
			want: []int{3, 1, 2, 4}, why: "attempt 3 is the only one with a usable patch"},
		{name: "NoneUsable", results: []*Result{attemptResult(0, 0, 0, 0), nil},
			want: []int{1, 2}, why: "no attempt produced a usable patch; attempt 1 is reported"},
		{name: "One", results: []*Result{attemptResult(0, 0, 0, 0)}, want: []int{1}, why: "the only attempt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			order, why := rank(tt.results)
			var got []int
			for _, i := range order {
				got = append(got, i+1)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("order = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("order = %v, want %v", got, tt.want)
				}
			}
			if !strings.Contains(why, tt.why) || strings.Contains(why, "\n") {
				t.Errorf("why = %q, want one line containing %q", why, tt.why)
			}
		})
	}
}
