package eval

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWilson(t *testing.T) {
	t.Parallel()
	// Reference values: Wilson's formula evaluated independently (R's prop.test without
	// continuity correction gives the same interval).
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 0, 0, 1},
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{1, 3, 0.0615, 0.7923},
		{30, 100, 0.2189, 0.3958},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n)
		if math.Abs(lo-tt.lo) > 5e-4 || math.Abs(hi-tt.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestMcNemar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b, c int
		p    float64
	}{
		{0, 0, 1},
		{1, 0, 1},
		{5, 0, 0.0625},   // 2 * 0.5^5
		{0, 6, 0.03125},  // 2 * 0.5^6
		{2, 8, 0.109375}, // 2 * (1+10+45)/1024
		{10, 10, 1},
		{3, 100, 2 * (1 + 103 + 5253 + 176851) / math.Pow(2, 103)},
	}
	for _, tt := range tests {
		if got := McNemar(tt.b, tt.c); math.Abs(got-tt.p) > 1e-9*math.Max(1, tt.p) && math.Abs(got-tt.p)/tt.p > 1e-6 {
			t.Errorf("McNemar(%d, %d) = %g, want %g", tt.b, tt.c, got, tt.p)
		}
	}
}

func TestBar(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		done, total int
		want        string
	}{
		{0, 10, "[..............................] 0/10 tasks, 1 resolved, 2 unresolved, 3 errors"},
		{5, 10, "[###############...............] 5/10 tasks, 1 resolved, 2 unresolved, 3 errors"},
		{10, 10, "[##############################] 10/10 tasks, 1 resolved, 2 unresolved, 3 errors"},
		{1, 0, "[..............................] 1/0 tasks, 1 resolved, 2 unresolved, 3 errors"},
	} {
		if got := Bar(c.done, c.total, Rate{Resolved: 1, Scored: 3, Errors: 3}); got != c.want {
			t.Errorf("Bar(%d, %d) = %q, want %q", c.done, c.total, got, c.want)
		}
	}
}

// TestCompareVerdicts: the verdict in plain words, from two folders' results.jsonl.
func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	write := func(statuses map[string]string) string {
		dir := t.TempDir()
		var b strings.Builder
		for id, s := range statuses {
			fmt.Fprintf(&b, `{"instance_id":%q,"status":%q}`+"\n", id, s)
		}
		if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := map[string]string{}, map[string]string{}
	for i := range 12 { // B resolves 9 tasks A does not, A none that B does not
		id := fmt.Sprintf("t%02d", i)
		a[id], b[id] = StatusUnresolved, StatusResolved
		if i >= 9 {
			a[id] = StatusResolved
		}
	}
	a["err"], b["err"] = StatusError, StatusResolved
	c, err := CompareDirs(write(a), write(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.OnlyB) != 9 || len(c.OnlyA) != 0 || c.Both != 3 || len(c.Unpaired) != 1 || math.Abs(c.P-2/512.0) > 1e-12 {
		t.Errorf("comparison %+v", c)
	}
	if s := c.String(); !strings.Contains(s, "verdict: significant at the 5% level: B resolves more") || !strings.Contains(s, "3 of 12 resolved: 25.0%") {
		t.Errorf("text:\n%s", s)
	}
	same, err := CompareDirs(write(b), write(b))
	if err != nil || !strings.Contains(same.String(), "verdict: no task flipped") {
		t.Errorf("same: %v\n%s", err, same)
	}
	if _, err := CompareDirs(t.TempDir(), write(b)); err == nil {
		t.Error("a folder without results.jsonl compared")
	}
	garbage := t.TempDir()
	os.WriteFile(filepath.Join(garbage, "results.jsonl"), []byte("{not json\n"), 0o644)
	if _, err := CompareDirs(garbage, write(b)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("garbage: %v", err)
	}
}
