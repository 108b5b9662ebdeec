package verify

import (
	"fmt"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400) // 800 bytes
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"Empty", "", 5, ""},
		{"ZeroLines", "a\nb\n", 0, ""},
		{"Fewer", "a\nb\n", 5, "a\nb"},
		{"Last", "1\n2\n3\n4\n", 2, "3\n4"},
		{"NoFinalNewline", "1\n2\n3", 2, "2\n3"},
		{"BlankLines", "a\n\n\nb\n", 3, "\n\nb"},
		{"CRLF", "a\r\nb\r\n", 5, "a\nb"},
		{"Progress", "10%\r50%\r100%\n", 5, "100%"},
		{"ANSI", "\x1b[31mFAIL\x1b[0m x\n\x1b]0;title\x07ok\n", 5, "FAIL x\nok"},
		{"Controls", "a\x00b\x07c\td\x7f\u0085e\n", 5, "abc\tde"},
		{"InvalidUTF8", "a\xffb\n", 5, "a\uFFFDb"},
		{"LongLine", long + "\n", 5, strings.Repeat("é", 150) + " [500 bytes cut]"},
		{"LoneEscape", "x\x1b", 5, "x"},
	}
	for _, tc := range tests {
		if got := tail([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("%s: tail = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadJUnitHostile(t *testing.T) {
	t.Parallel()
	const ok = `<testsuite><testcase classname="c" name="t"/></testsuite>`
	tests := []struct {
		name   string
		report string
		want   string // fmt of Tests
	}{
		{"Minimal", ok, "map[c.t:pass]"},
		{"Suites", `<?xml version="1.0"?><testsuites><testsuite>` +
			`<testcase classname="a" name="x"><failure/></testcase>` +
			`<testcase name="bare"><error message="e"/></testcase>` +
			`<testcase classname="a" name="s"><skipped/></testcase>` +
			`<testcase classname="a" name="x"/>` + // listed twice: worst result wins
			`</testsuite></testsuites>`, "map[a.s:skip a.x:fail bare:fail]"},
		{"SkipThenError", `<testsuite><testcase name="t"><skipped/><error/></testcase></testsuite>`, "map[t:fail]"},
		{"Doctype", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite><testcase name="&a;"/></testsuite>`, "map[]"},
		{"ExternalEntity", `<!DOCTYPE x SYSTEM "file:///etc/passwd"><testsuite><testcase name="t"/></testsuite>`, "map[]"},
		{"UnknownEntity", `<testsuite><testcase name="&bomb;"/></testsuite>`, "map[]"},
		{"NotWellFormed", `<testsuite><testcase name="t">`, "map[]"},
		{"NoSuite", `<html><testcase name="t"/></html>`, "map[]"},
		{"Garbage", "\x00\x01not xml", "map[]"},
		{"Empty", "", "map[]"},
		{"FailureOutsideCase", `<testsuite><failure/><testcase name="t"/></testsuite>`, "map[t:pass]"},
	}
	for _, tc := range tests {
		o := Read(PlanFor("pytest"), 1, nil, []byte(tc.report))
		if got := fmt.Sprint(o.Tests); got != tc.want {
			t.Errorf("%s: Tests = %s, want %s", tc.name, got, tc.want)
		}
		if tc.want == "map[]" && o.Tests != nil {
			t.Errorf("%s: unusable report gave a non-nil map", tc.name)
		}
	}
	big := "<testsuite>" + strings.Repeat("<testcase name='t'/>", maxReportBytes/20+1) + "</testsuite>"
	if o := Read(PlanFor("pytest"), 0, nil, []byte(big)); o.Tests != nil {
		t.Errorf("a report over %d bytes was read", maxReportBytes)
	}
}

func TestReadGoJSONGarbage(t *testing.T) {
	t.Parallel()
	plan := PlanFor(CmdGo)
	tests := []struct {
		name   string
		out    string
		exit   int
		tests  string
		tail   string
		failed bool
	}{
		{"NotJSON", "go: command not found\n", 127, "map[]", "go: command not found", true},
		{"Mixed", `{"Action":"run","Package":"p","Test":"T"}` + "\nnoise {\n" +
			`{"Action":"output","Package":"p","Test":"T","Output":"--- FAIL: T\n"}` + "\n" +
			`{"Action":"fail","Package":"p","Test":"T"}` + "\n{\"Action\":\n" +
			`{"Action":"fail","Package":"p"}` + "\n", 1,
			"map[p.T:fail]", "noise {\n--- FAIL: T\n{\"Action\":", true},
		{"CutOffWhileRunning", `{"Action":"run","Package":"p","Test":"T"}` + "\n" +
			`{"Action":"output","Package":"p","Test":"T","Output":"panic: test timed out\n"}` + "\n", 2,
			"map[p.T:fail]", "panic: test timed out", true},
		{"RunningButExitZero", `{"Action":"run","Package":"p","Test":"T"}` + "\n", 0, "map[]", "", false},
		{"WrongTypes", `{"Action":5,"Test":["x"]}` + "\n", 1, "map[]", `{"Action":5,"Test":["x"]}`, true},
		{"UnknownAction", `{"Action":"explode","Package":"p","Test":"T"}` + "\n", 0, "map[]", "", false},
	}
	for _, tc := range tests {
		o := Read(plan, tc.exit, []byte(tc.out), nil)
		if got := fmt.Sprint(o.Tests); got != tc.tests {
			t.Errorf("%s: Tests = %s, want %s", tc.name, got, tc.tests)
		}
		if o.Tail != tc.tail {
			t.Errorf("%s: tail = %q, want %q", tc.name, o.Tail, tc.tail)
		}
		if o.Failed() != tc.failed {
			t.Errorf("%s: Failed = %v", tc.name, o.Failed())
		}
	}
	if o := Read(plan, 127, []byte("bash: go: command not found\n"), nil); o.Tests != nil {
		t.Errorf("output without events gave per-test results %v", o.Tests)
	}
}

func TestReadLimits(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range maxTests + 10 {
		fmt.Fprintf(&b, `{"Action":"pass","Package":"p","Test":"T%d"}`+"\n", i)
	}
	fmt.Fprintf(&b, `{"Action":"fail","Package":"p","Test":"%s"}`+"\n", strings.Repeat("x", 5000))
	o := Read(PlanFor(CmdGo), 1, []byte(b.String()), nil)
	if len(o.Tests) != maxTests {
		t.Errorf("kept %d tests, want the cap %d", len(o.Tests), maxTests)
	}
	for k := range o.Tests {
		if len(k) > maxNameLen+3 {
			t.Fatalf("kept a %d-byte name", len(k))
		}
	}
}

func TestReadPlain(t *testing.T) {
	t.Parallel()
	o := Read(PlanFor("npm test"), 1, []byte("\x1b[31m1 failing\x1b[0m\n"), []byte("<testsuite/>"))
	if o.Tests != nil || o.Tail != "1 failing" || o.Command != "npm test" || !o.Failed() {
		t.Errorf("plain outcome: %+v", o)
	}
	if (Outcome{TimedOut: true}).Failed() != true || (Outcome{Tests: map[string]Status{"a": Skip}}).Failed() {
		t.Error("Failed() misjudges timeouts or skips")
	}
}
