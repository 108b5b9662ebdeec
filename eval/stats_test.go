package eval

import (
	"math"
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
