package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Comparison pairs two evaluations task by task: the tasks both scored (an error on either
// side leaves a task out of the test, and is listed).
type Comparison struct {
	A, B    string   // the folders
	OnlyA   []string // resolved by A, not by B
	OnlyB   []string // resolved by B, not by A
	Both    int
	Neither int
	// Unpaired are tasks in one evaluation only, or an error in either.
	Unpaired []string
	RateA    Rate // over the paired tasks
	RateB    Rate
	// P is McNemar's exact two-sided p-value on the flips (len(OnlyA), len(OnlyB)).
	P float64
}

// CompareDirs reads results.jsonl of two evaluation folders and compares them.
func CompareDirs(a, b string) (*Comparison, error) {
	ra, err := readResults(a)
	if err != nil {
		return nil, err
	}
	rb, err := readResults(b)
	if err != nil {
		return nil, err
	}
	c := &Comparison{A: a, B: b}
	var pa, pb []*Record
	for id, x := range ra {
		y, ok := rb[id]
		if !ok || x.Status == StatusError || y.Status == StatusError {
			c.Unpaired = append(c.Unpaired, id)
			continue
		}
		pa, pb = append(pa, x), append(pb, y)
		switch {
		case x.Resolved && y.Resolved:
			c.Both++
		case x.Resolved:
			c.OnlyA = append(c.OnlyA, id)
		case y.Resolved:
			c.OnlyB = append(c.OnlyB, id)
		default:
			c.Neither++
		}
	}
	for id := range rb {
		if _, ok := ra[id]; !ok {
			c.Unpaired = append(c.Unpaired, id)
		}
	}
	slices.Sort(c.OnlyA)
	slices.Sort(c.OnlyB)
	slices.Sort(c.Unpaired)
	c.RateA, c.RateB = RateOf(pa), RateOf(pb)
	c.P = McNemar(len(c.OnlyA), len(c.OnlyB))
	return c, nil
}

// readResults reads a folder's results.jsonl, by instance_id.
func readResults(dir string) (map[string]*Record, error) {
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("reading an evaluation: %w", err)
	}
	defer f.Close()
	out := map[string]*Record{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.InstanceID == "" {
			return nil, fmt.Errorf("%s line %d: not a result of frognano eval", filepath.Join(dir, "results.jsonl"), n)
		}
		r.Resolved = r.Status == StatusResolved
		out[r.InstanceID] = &r
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "results.jsonl"), err)
	}
	return out, nil
}

// String is the comparison in plain words: the rates, the flips both ways, and whether the
// difference is significant at the 5% level.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "A %s: %s\n", c.A, c.RateA)
	fmt.Fprintf(&b, "B %s: %s\n", c.B, c.RateB)
	fmt.Fprintf(&b, "paired tasks: %d (resolved by both %d, by neither %d); left out: %d (in one evaluation only, or an error in either)\n",
		c.Both+c.Neither+len(c.OnlyA)+len(c.OnlyB), c.Both, c.Neither, len(c.Unpaired))
	list := func(ids []string) string {
		v := make([]string, len(ids))
		for i, id := range ids {
			v[i] = visible(id)
		}
		return strings.Join(v, ", ")
	}
	fmt.Fprintf(&b, "resolved by A only (%d): %s\n", len(c.OnlyA), list(c.OnlyA))
	fmt.Fprintf(&b, "resolved by B only (%d): %s\n", len(c.OnlyB), list(c.OnlyB))
	fmt.Fprintf(&b, "McNemar's exact test on the %d flipped tasks: p = %.3f\n", len(c.OnlyA)+len(c.OnlyB), c.P)
	switch {
	case len(c.OnlyA)+len(c.OnlyB) == 0:
		b.WriteString("verdict: no task flipped; the two resolve the same tasks.\n")
	case c.P < 0.05:
		better := "A"
		if len(c.OnlyB) > len(c.OnlyA) {
			better = "B"
		}
		fmt.Fprintf(&b, "verdict: significant at the 5%% level: %s resolves more of these tasks, and a difference this large is unlikely to be chance.\n", better)
	default:
		fmt.Fprintf(&b, "verdict: not significant at the 5%% level: a difference of %d flips either way is what chance alone often gives; run more tasks (or attempts) before choosing.\n", abs(len(c.OnlyA)-len(c.OnlyB)))
	}
	return b.String()
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
