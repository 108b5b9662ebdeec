package scanner

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	type sc struct{ Name, Command string }
	for _, c := range []struct {
		in   string
		want []sc
		err  string
	}{
		{"", nil, ""},
		{"  \n ;; ", nil, ""},
		{"semgrep=semgrep scan --sarif -o {sarif} .", []sc{{"semgrep", "semgrep scan --sarif -o {sarif} ."}}, ""},
		{"a=x --y=1 ;; b_2 = sh -c 'echo a=b' \n c-3=z", []sc{{"a", "x --y=1"}, {"b_2", "sh -c 'echo a=b'"}, {"c-3", "z"}}, ""},
		{"a=x\r\nb=y\r\n", []sc{{"a", "x"}, {"b", "y"}}, ""},
		{"a=x [not options]", []sc{{"a", "x [not options]"}}, ""},
		{"lint[code=runs config=a.cfg]=tool -o {sarif}", []sc{{"lint", "tool -o {sarif}"}}, ""},
		{"lint [tool=semgrep] = wrapper.sh", []sc{{"lint", "wrapper.sh"}}, ""},
		{"Semgrep=x", nil, "entry 1 is not NAME=COMMAND"},
		{"x", nil, "entry 1 is not NAME=COMMAND"},
		{"a=x;;a=y", nil, `entry 2: the name "a" is used twice`},
		{"a[code=runs]=x;;a=y", nil, `entry 2: the name "a" is used twice`},
		{"a=", nil, "entry 1 (a) has no command"},
		{"a[code=runs]=", nil, "entry 1 (a) has no command"},
		{"../evil=x", nil, "entry 1 is not NAME=COMMAND"},
		{strings.Repeat("n", 33) + "=x", nil, "entry 1 is not NAME=COMMAND"},
		{"ok=x;;bad name=token-SECRETVALUE", nil, "entry 2 is not NAME=COMMAND"},
		{"a[code=runs=x --token SECRETVALUE", nil, "entry 1 has a '[' without its ']'"},
		{"a[code=runs] x=SECRETVALUE", nil, "entry 1 is not NAME=COMMAND"},
		{"a[code=maybe]=SECRETVALUE", nil, `entry 1 (a) has code="maybe": want code=runs or code=none`},
		{"a[code=runs code=none]=x", nil, "entry 1 (a) has code= twice"},
		{"a[colour=red]=SECRETVALUE", nil, `entry 1 (a) has an unknown option "colour" (options are config=`},
		{"a[config]=x", nil, "entry 1 (a) has an option that is not KEY=VALUE"},
		{"a[tool=sonar]=x", nil, `entry 1 (a) names the tool "sonar", which frognano does not know (known: semgrep, bandit`},
		{"a[config=/etc/passwd]=x", nil, `entry 1 (a) has a bad config pattern "/etc/passwd": a pattern is a path inside the repository`},
		{"a[config=../x]=x", nil, `has a bad config pattern "../x": a pattern has an empty, '.' or '..' part`},
		{"a[config=x,,y]=x", nil, `has a bad config pattern ""`},
		{"a[config=x[]=x", nil, `has a bad config pattern "x[": a pattern has a malformed '[...]'`},
		{"a[config=a**b]=x", nil, `'**' must be a whole part of a pattern`},
		{strings.Repeat("a=x\n", 0) + func() string {
			var s []string
			for i := range 17 {
				s = append(s, string(rune('a'+i))+"=x")
			}
			return strings.Join(s, ";;")
		}(), nil, "17 scanners; at most 16"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error = %v, want %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "SECRETVALUE") {
				t.Errorf("Parse(%q) error quotes a command: %v", c.in, err)
			}
			continue
		}
		var names []sc
		for _, g := range got {
			names = append(names, sc{g.Name, g.Command})
		}
		if err != nil || !reflect.DeepEqual(names, c.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, names, err, c.want)
		}
	}
}

func TestFailLevel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want FailLevel
		ok   bool
	}{{"", FailError, true}, {"error", FailError, true}, {" warning ", FailWarning, true}, {"note", FailNote, true}, {"none", FailNone, true}, {"fatal", "", false}, {"ERROR", "", false}} {
		got, err := ParseFailLevel(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseFailLevel(%q) = %q, %v", c.in, got, err)
		}
	}
	for _, c := range []struct {
		f    FailLevel
		l    Level
		want bool
	}{
		{FailError, LevelError, true}, {FailError, LevelWarning, false}, {"", LevelError, true}, {"", LevelWarning, false},
		{FailWarning, LevelError, true}, {FailWarning, LevelWarning, true}, {FailWarning, LevelNote, false},
		{FailNote, LevelNote, true}, {FailNote, LevelNone, false}, {FailNone, LevelError, false}, {"bogus", LevelWarning, false},
	} {
		if got := c.f.Fails(c.l); got != c.want {
			t.Errorf("%q.Fails(%s) = %v", c.f, c.l, got)
		}
	}
}

// testAdded is what git's zero-context diff of a patched tree adds (check/secrets.AddedLines
// makes it): app/a.py gains lines 3-4 and changes line 10, lib/new.py is new (lines 1-2),
// old.py is deleted (nothing added).
var testAdded = []Added{
	{Path: "app/a.py", Line: 3, Text: "    x = 1\n    y = 2"},
	{Path: "app/a.py", Line: 10, Text: "    return eval(s)"},
	{Path: "lib/new.py", Line: 1, Text: "import os\nos.system(cmd)"},
}

func testChanged() Changed { return ChangedLines(testAdded) }

func TestChangedLines(t *testing.T) {
	t.Parallel()
	c := testChanged()
	want := Changed{"app/a.py": {{3, 4}, {10, 10}}, "lib/new.py": {{1, 2}}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("ChangedLines = %v, want %v", c, want)
	}
	for _, k := range []struct {
		file        string
		first, last int
		want        bool
	}{
		{"app/a.py", 3, 3, true}, {"app/a.py", 4, 4, true}, {"app/a.py", 2, 2, false}, {"app/a.py", 5, 9, false},
		{"app/a.py", 1, 3, true}, {"app/a.py", 9, 12, true}, {"app/a.py", 11, 11, false}, {"lib/new.py", 2, 2, true},
		{"old.py", 1, 1, false}, {"app/b.py", 3, 3, false}, {"lib/new.py", 0, 0, false},
	} {
		if got := c.Touches(k.file, k.first, k.last); got != k.want {
			t.Errorf("Touches(%s, %d, %d) = %v", k.file, k.first, k.last, got)
		}
	}
	// Adjacent fragments merge into one range.
	m := ChangedLines([]Added{{Path: "f", Line: 5, Text: "a\nb"}, {Path: "f", Line: 1, Text: "x"}, {Path: "f", Line: 7, Text: "c"}, {Path: "?", Line: 1, Text: "q"}})
	if want := (Changed{"f": {{1, 1}, {5, 7}}}); !reflect.DeepEqual(m, want) {
		t.Errorf("merged = %v, want %v", m, want)
	}
}

// sarifLog builds a SARIF 2.1.0 log of one run with the given results (JSON objects).
func sarifLog(run map[string]any, results ...map[string]any) []byte {
	if run == nil {
		run = map[string]any{}
	}
	if _, ok := run["tool"]; !ok {
		run["tool"] = map[string]any{"driver": map[string]any{"name": "fake"}}
	}
	run["results"] = results
	b, _ := json.Marshal(map[string]any{"version": "2.1.0", "runs": []any{run}})
	return b
}

func result(rule, level, msg, uri string, line int) map[string]any {
	r := map[string]any{"message": map[string]any{"text": msg},
		"locations": []any{map[string]any{"physicalLocation": map[string]any{
			"artifactLocation": map[string]any{"uri": uri}, "region": map[string]any{"startLine": line}}}}}
	if rule != "" {
		r["ruleId"] = rule
	}
	if level != "" {
		r["level"] = level
	}
	return r
}

func TestReadKeepsChangedLinesOnly(t *testing.T) {
	t.Parallel()
	data := sarifLog(nil,
		result("py.eval", "error", "eval of untrusted input", "app/a.py", 10),
		result("py.style", "note", "unchanged line", "app/a.py", 7),
		result("py.os-system", "warning", "command injection", "file:///workspace/lib/new.py", 2),
		result("py.os-system", "warning", "command injection", "file:///workspace/lib/new.py", 2), // a duplicate
		result("x", "error", "outside", "../etc/passwd", 1),
		result("x", "error", "outside", "file:///etc/passwd", 1),
		result("x", "error", "other scheme", "https://example.invalid/app/a.py", 10),
		result("x", "error", "in .git", ".git/config", 1),
	)
	got, err := Read(data, "/workspace", testChanged())
	if err != nil {
		t.Fatal(err)
	}
	want := Findings{Kept: []Finding{
		{Rule: "py.eval", Level: LevelError, Message: "eval of untrusted input", File: "app/a.py", Line: 10, EndLine: 10},
		{Rule: "py.os-system", Level: LevelWarning, Message: "command injection", File: "lib/new.py", Line: 2, EndLine: 2},
	}, Elsewhere: 1, Unplaced: 4}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read = %+v\nwant %+v", got, want)
	}
}

func TestReadNormalisesLocations(t *testing.T) {
	t.Parallel()
	// A name the patch chose, written into the uri as is by a scanner that does not escape it:
	// read as a URI it named another file or none, and the finding was dropped.
	c := Changed{"src/x.py": {{5, 5}}, "a b/c.py": {{1, 1}}, "h#a.py": {{5, 5}}, "q?.py": {{5, 5}}, "p%zz.py": {{5, 5}},
		"a:b.py": {{5, 5}}, "lit%20eral.py": {{5, 5}}, "src/e#x.py": {{5, 5}}}
	bases := map[string]any{
		"SRC":       map[string]any{"uri": "src/", "uriBaseId": "ROOT"},
		"ROOT":      map[string]any{"uri": "file:///workspace/"},
		"NOSLASH":   map[string]any{"uri": "file:///workspace/src"},
		"ELSEWHERE": map[string]any{"uri": "file:///home/ci/"},
		"LOOP":      map[string]any{"uri": "x/", "uriBaseId": "LOOP"},
	}
	for _, k := range []struct {
		uri, base string
		place     string // "" not placed
	}{
		{"src/x.py", "", "src/x.py"},
		{"./src/x.py", "", "src/x.py"},
		{"src/./y/../x.py", "", "src/x.py"},
		{"/workspace/src/x.py", "", "src/x.py"},
		{"file:///workspace/src/x.py", "", "src/x.py"},
		{"file://localhost/workspace/src/x.py", "", "src/x.py"},
		{"x.py", "SRC", "src/x.py"},
		{"x.py", "NOSLASH", "src/x.py"},
		{"src/x.py", "%SRCROOT%", "src/x.py"},
		{"a%20b/c.py", "", "a b/c.py"},
		{"h#a.py", "", "h#a.py"},
		{"q?.py", "", "q?.py"},
		{"p%zz.py", "", "p%zz.py"},
		{"a:b.py", "", "a:b.py"},
		{"lit%20eral.py", "", "lit%20eral.py"},
		{"h%23a.py", "", "h#a.py"},
		{"e#x.py", "SRC", "src/e#x.py"},
		{"/workspace/h#a.py", "", "h#a.py"},
		{"../h#a.py", "", ""},
		{"src/x.py", "ELSEWHERE", ""},
		{"x.py", "LOOP", ""},
		{"file://evil/workspace/src/x.py", "", ""},
		{"/workspace", "", ""},
		{"/workspacex/src/x.py", "", ""},
		{"src/../../etc/passwd", "", ""},
		{"src/x.py%00", "", ""},
		{"C:/src/x.py", "", ""},
		{"mailto:a@b", "", ""},
	} {
		loc := map[string]any{"uri": k.uri}
		if k.base != "" {
			loc["uriBaseId"] = k.base
		}
		r := map[string]any{"ruleId": "r", "message": map[string]any{"text": "m"}, "locations": []any{map[string]any{"physicalLocation": map[string]any{
			"artifactLocation": loc, "region": map[string]any{"startLine": map[bool]int{true: 1, false: 5}[strings.HasPrefix(k.place, "a b")]}}}}}
		got, err := Read(sarifLog(map[string]any{"originalUriBaseIds": bases}, r), "/workspace/", c)
		if err != nil {
			t.Fatalf("%s: %v", k.uri, err)
		}
		switch {
		case k.place == "" && (len(got.Kept) != 0 || got.Unplaced != 1):
			t.Errorf("%q (base %q) was placed: %+v", k.uri, k.base, got)
		case k.place != "" && (len(got.Kept) != 1 || got.Kept[0].File != k.place):
			t.Errorf("%q (base %q) = %+v, want %s", k.uri, k.base, got, k.place)
		}
	}
}

func TestReadLevelsRulesAndMessages(t *testing.T) {
	t.Parallel()
	run := map[string]any{"tool": map[string]any{"driver": map[string]any{"name": "fake", "rules": []any{
		map[string]any{"id": "R1", "defaultConfiguration": map[string]any{"level": "error"},
			"messageStrings":   map[string]any{"default": map[string]any{"text": "{0} flows into {1}"}},
			"shortDescription": map[string]any{"text": "short R1"}},
		map[string]any{"id": "R2", "shortDescription": map[string]any{"text": "short R2"}},
	}}}, "artifacts": []any{map[string]any{"location": map[string]any{"uri": "lib/new.py"}}}}
	loc := func(line int) []any {
		return []any{map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": "app/a.py"},
			"region": map[string]any{"startLine": line, "endLine": line + 1}}}}
	}
	data := sarifLog(run,
		map[string]any{"ruleId": "R1", "message": map[string]any{"id": "default", "arguments": []any{"input", "eval"}}, "locations": loc(3)},
		map[string]any{"rule": map[string]any{"id": "R2"}, "message": map[string]any{}, "locations": loc(9)},
		map[string]any{"ruleId": "R2", "kind": "review", "message": map[string]any{"text": "look"}, "locations": loc(4)},
		map[string]any{"ruleId": "R2", "kind": "pass", "message": map[string]any{"text": "fine"}, "locations": loc(3)},
		map[string]any{"ruleId": "R9", "level": "catastrophic", "message": map[string]any{"text": "bad\n\tlevel " + strings.Repeat("x", 3000)}, "locations": loc(3)},
		map[string]any{"message": map[string]any{"text": "by index"}, "locations": []any{map[string]any{"physicalLocation": map[string]any{
			"artifactLocation": map[string]any{"index": 0}, "region": map[string]any{"startLine": 1}}}}},
		map[string]any{"ruleId": "R1", "message": map[string]any{"text": "no region"}, "locations": []any{map[string]any{"physicalLocation": map[string]any{
			"artifactLocation": map[string]any{"uri": "app/a.py"}}}}},
		map[string]any{"ruleId": "R1", "message": map[string]any{"text": "no location"}},
	)
	got, err := Read(data, "/workspace", testChanged())
	if err != nil {
		t.Fatal(err)
	}
	if got.Unplaced != 2 || got.Elsewhere != 0 || len(got.Kept) != 5 {
		t.Fatalf("Read = %+v", got)
	}
	k := got.Kept
	if k[0].Rule != "R1" || k[0].Level != LevelError || k[0].Message != "input flows into eval" || k[0].Line != 3 || k[0].EndLine != 4 {
		t.Errorf("message string and rule default: %+v", k[0])
	}
	if k[1].Rule != "R9" || k[1].Level != LevelWarning || !strings.HasPrefix(k[1].Message, "bad level xxx") || len([]rune(k[1].Message)) != maxMessage+1 {
		t.Errorf("unknown level and long message: %+v (%d characters)", k[1], len([]rune(k[1].Message)))
	}
	if k[2].Rule != "R2" || k[2].Level != LevelNone || k[2].Line != 4 {
		t.Errorf("kind review is level none: %+v", k[2])
	}
	if k[3].Rule != "R2" || k[3].Level != LevelWarning || k[3].Message != "short R2" || k[3].Line != 9 {
		t.Errorf("rule reference and short description: %+v", k[3])
	}
	if k[4].File != "lib/new.py" || k[4].Rule != "" || k[4].Message != "by index" {
		t.Errorf("artifact index: %+v", k[4])
	}
}

func TestReadRefusesWhatIsNotSARIF(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"empty":       "  \n",
		"garbage":     "\x00\x01not json",
		"html":        "<html>",
		"wrong shape": `{"version": "2.1.0", "runs": {"a": 1}}`,
		"old version": `{"version": "1.0.0", "runs": []}`,
		"no runs":     `{"version": "2.1.0"}`,
		"too large":   `{"version": "2.1.0", "runs": [], "x": "` + strings.Repeat("a", MaxSARIFBytes) + `"}`,
		"truncated":   `{"version": "2.1.0", "runs": [{"results": [`,
	} {
		if _, err := Read([]byte(data), "/workspace", testChanged()); err == nil {
			t.Errorf("%s: Read accepted it", name)
		} else if strings.Contains(err.Error(), "not json") || strings.Contains(err.Error(), "<html>") {
			t.Errorf("%s: the error quotes the file: %v", name, err)
		}
	}
	if got, err := Read([]byte(`{"version": "2.1.0", "runs": []}`), "/workspace", testChanged()); err != nil || len(got.Kept) != 0 {
		t.Errorf("an empty log: %+v, %v", got, err)
	}
}

func TestReadCapsFindings(t *testing.T) {
	t.Parallel()
	var rs []map[string]any
	for i := range MaxFindings + 7 {
		rs = append(rs, result("r", "error", strings.Repeat("m", i%50)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), "lib/new.py", 1))
	}
	got, err := Read(sarifLog(nil, rs...), "/workspace", testChanged())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kept) != MaxFindings || got.More != 7 {
		t.Errorf("kept %d, more %d", len(got.Kept), got.More)
	}
}
