package verify

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	type m = map[string]Status
	tests := []struct {
		name          string
		before, after m
		want          Comparison
	}{
		{"ExitCodeOnly", nil, m{"a": Fail}, Comparison{AfterFailed: 1}},
		{"Basic", m{"p.A": Fail, "p.B": Pass, "p.C": Fail, "p.D": Pass, "p.S": Skip},
			m{"p.A": Pass, "p.B": Fail, "p.C": Fail, "p.E": Fail, "p.S": Fail},
			Comparison{Fixed: []string{"p.A"}, Broken: []string{"p.B", "p.S"}, StillFailing: []string{"p.C"},
				New: []string{"p.E"}, Removed: []string{"p.D"}, BeforeFailed: 2, AfterFailed: 4, AfterPassed: 1, PerTest: true}},
		{"PackageBreaks", m{"p.A": Pass, "p.B": Pass, "q.C": Pass}, m{"p": Fail, "q.C": Pass},
			Comparison{Broken: []string{"p"}, BeforeFailed: 0, AfterFailed: 1, AfterPassed: 1, PerTest: true}},
		{"TestStopsBeforeSubtests", m{"p.T": Pass, "p.T/a": Pass}, m{"p.T": Fail},
			Comparison{Broken: []string{"p.T"}, AfterFailed: 1, PerTest: true}},
		{"SubtestRemovedBesideOthers", m{"p.T": Pass, "p.T/a": Pass, "p.T/b": Pass}, m{"p.T": Pass, "p.T/a": Pass},
			Comparison{Removed: []string{"p.T/b"}, AfterPassed: 2, PerTest: true}},
		{"DottedNamesNotConfused", m{"a.b": Fail}, m{"a.bc": Pass},
			Comparison{New: []string{"a.bc"}, Removed: []string{"a.b"}, BeforeFailed: 1, AfterPassed: 1, PerTest: true}},
		{"BothEmpty", m{}, m{}, Comparison{PerTest: true}},
	}
	for _, tc := range tests {
		got := Compare(Outcome{Tests: tc.before}, Outcome{Tests: tc.after})
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// ExampleCompare shows the before/after summary a run report is built from.
func ExampleCompare() {
	plan := PlanFor("go test ./...")
	before := Read(plan, 1, []byte(`{"Action":"fail","Package":"example.com/m"}`+"\n"), nil)
	after := Read(plan, 0, []byte(
		`{"Action":"pass","Package":"example.com/m","Test":"TestParse"}`+"\n"+
			`{"Action":"pass","Package":"example.com/m"}`+"\n"), nil)
	c := Compare(before, after)
	fmt.Println("fixed:", c.Fixed)
	fmt.Println("new:", c.New)
	fmt.Println("failing after:", c.AfterFailed)
	// Output:
	// fixed: [example.com/m]
	// new: [example.com/m.TestParse]
	// failing after: 0
}

func FuzzReadGoJSON(f *testing.F) {
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"T"}`+"\n"+`{"Action":"fail","Package":"p","Test":"T/a"}`+"\n"), 1)
	f.Add([]byte(`{"Action":"output","Package":"p","Output":"ok\n"}`+"\nplain\n"), 0)
	f.Add([]byte("{\"Action\":\"fail\",\"Package\":\"\"}\n\x1b[1m\r\n"), 2)
	f.Fuzz(func(t *testing.T, out []byte, exit int) {
		o := Read(PlanFor(CmdGo), exit, out, nil)
		checkOutcome(t, o)
		Compare(o, o)
	})
}

func FuzzReadJUnit(f *testing.F) {
	if b, err := os.ReadFile("testdata/pytest-junit.xml"); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte(`<testsuite><testcase classname="a" name="b"><failure/></testcase></testsuite>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "b">]><testsuite/>`))
	f.Fuzz(func(t *testing.T, report []byte) {
		o := Read(PlanFor("pytest"), 1, []byte("out\n"), report)
		checkOutcome(t, o)
		if o.Tests != nil {
			c := Compare(o, o)
			if len(c.Fixed)+len(c.Broken)+len(c.New)+len(c.Removed) != 0 {
				t.Fatalf("a run compared with itself changed: %+v", c)
			}
		}
	})
}

func FuzzTail(f *testing.F) {
	f.Add([]byte("a\r\nb\x1b[31mc\x1b]0;t\x07\n"), 3)
	f.Fuzz(func(t *testing.T, out []byte, n int) {
		n %= 1000
		s := tail(out, n)
		if n > 0 && strings.Count(s, "\n") > n-1 {
			t.Fatalf("tail(%d) returned %d lines", n, strings.Count(s, "\n")+1)
		}
		for _, r := range s {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
				t.Fatalf("tail kept control character %q", r)
			}
		}
	})
}

// checkOutcome asserts the invariants Read promises on any input.
func checkOutcome(t *testing.T, o Outcome) {
	t.Helper()
	if len(o.Tests) > maxTests {
		t.Fatalf("%d tests kept", len(o.Tests))
	}
	for k, s := range o.Tests {
		if len(k) > maxNameLen+3 || (s != Pass && s != Fail && s != Skip) {
			t.Fatalf("bad entry %q: %q", k, s)
		}
	}
	if strings.Count(o.Tail, "\n") >= tailLines {
		t.Fatalf("tail has more than %d lines", tailLines)
	}
}

// BenchmarkReadGoJSON reads 20,000 test events (about 2 MB).
func BenchmarkReadGoJSON(b *testing.B) {
	var s strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&s, `{"Action":"run","Package":"example.com/m/p%d","Test":"TestT%d"}`+"\n", i%50, i)
		fmt.Fprintf(&s, `{"Action":"output","Package":"example.com/m/p%d","Test":"TestT%d","Output":"=== RUN   TestT%d\n"}`+"\n", i%50, i, i)
		fmt.Fprintf(&s, `{"Action":"output","Package":"example.com/m/p%d","Test":"TestT%d","Output":"--- PASS: TestT%d (0.00s)\n"}`+"\n", i%50, i, i)
		fmt.Fprintf(&s, `{"Action":"pass","Package":"example.com/m/p%d","Test":"TestT%d"}`+"\n", i%50, i)
	}
	out := []byte(s.String())
	plan := PlanFor(CmdGo)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if o := Read(plan, 0, out, nil); len(o.Tests) != 5000 {
			b.Fatalf("%d tests", len(o.Tests))
		}
	}
}

// BenchmarkCompare compares two runs of 50,000 tests.
func BenchmarkCompare(b *testing.B) {
	before, after := map[string]Status{}, map[string]Status{}
	for i := range 50000 {
		k := fmt.Sprintf("example.com/m/p%d.TestT%d", i%100, i)
		before[k], after[k] = Pass, Pass
		if i%7 == 0 {
			after[k] = Fail
		}
	}
	for b.Loop() {
		Compare(Outcome{Tests: before}, Outcome{Tests: after})
	}
}
