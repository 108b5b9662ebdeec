package executor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue #8: the inputs a small model really produces, where Python's json.loads, float(),
// int(), repr() and pathlib decide what the model reads. The expected texts are the
// reference's (the differential corpus in runner/sandbox/testdata holds many more).

func TestArgumentsAsJSONLoads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw string
		want      string // pyRepr of the dict, or "fatal: ..." for an uncaught exception
	}{
		{"Object", `{"file_path": "a.txt"}`, `{'file_path': 'a.txt'}`},
		{"TrailingBracket", `{"file_path": "a.txt"}]`, `{}`},
		{"TrailingBrace", `{"file_path": "a.txt"}}`, `{}`},
		{"TrailingWord", `{"file_path": "a.txt"} x`, `{}`},
		{"SecondObject", `{"file_path": "a.txt"}{}`, `{}`},
		{"TrailingJSONSpace", "{\"a\": 1} \t\r\n", `{'a': 1}`},
		{"TrailingFormFeed", "{\"a\": 1}\f", `{}`},
		{"LeadingBOM", "\ufeff{\"a\": 1}", `{}`},
		{"NaN", `{"a": NaN, "b": Infinity, "c": -Infinity}`, `{'a': nan, 'b': inf, 'c': -inf}`},
		{"LowerNaN", `{"a": nan}`, `{}`},
		{"MinusNaN", `{"a": -NaN}`, `{}`},
		{"HugeFloat", `{"a": 1e400, "b": -1e400, "c": 1e-400}`, `{'a': inf, 'b': -inf, 'c': 0.0}`},
		{"LeadingZero", `{"a": 01}`, `{}`},
		{"BareDot", `{"a": 1.}`, `{}`},
		{"Duplicate", `{"a": 1, "b": 2, "a": 3}`, `{'a': 3, 'b': 2}`},
		{"RawControl", "{\"a\": \"x\ty\"}", `{}`},
		{"SurrogatePair", `{"a": "\ud83d\ude00"}`, "{'a': '\U0001F600'}"},
		{"NotObject", `[{"a": 1}]`, `{}`},
		{"DigitLimit", `{"a": ` + strings.Repeat("1", 4300) + `}`, "{'a': " + strings.Repeat("1", 4300) + "}"},
		{"OverDigitLimit", `{"a": -` + strings.Repeat("1", 4301) + `}`, "fatal: ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"},
		{"OverDigitLimitBeforeSyntaxError", `{"a": ` + strings.Repeat("1", 4301) + ` x`, "fatal: ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"},
		{"Deep", `{"a": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, "fatal: RecursionError: maximum recursion depth exceeded while decoding a JSON array from a unicode string"},
		{"DeepObjects", strings.Repeat(`{"a": `, 2000) + "1" + strings.Repeat("}", 2000), "fatal: RecursionError: maximum recursion depth exceeded while decoding a JSON object from a unicode string"},
		{"NotDeepEnough", `{"a": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, `{'a': ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := parseCall(tt.raw)
			got := pyRepr(d)
			if err != nil {
				got = "fatal: " + err.Error()
			}
			if got != tt.want {
				t.Errorf("parseCall(%.60q)\n got: %.300q\nwant: %.300q", tt.raw, got, tt.want)
			}
		})
	}
}

func TestLoneSurrogateIsTheRequestFileError(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	for raw, want := range map[string]string{
		`{"file_path": "\ud800"}`:                         `UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' in position 40: surrogates not allowed`,
		`{"x": 1, "content": "a\udc80\ud800"}`:            `UnicodeEncodeError: 'utf-8' codec can't encode characters in position 47-48: surrogates not allowed`,
		`{"x": "\ud800", "x": "ok", "file_path": "nope"}`: `FileNotFoundError: [Errno 2] No such file or directory: '` + dir + `/nope'`,
	} {
		if got := Execute(context.Background(), dir, "Read", raw); got != want {
			t.Errorf("Read %s\n got: %q\nwant: %q", raw, got, want)
		}
	}
}

// TestTrailingGarbageRunsNothing: with trailing data the call sees {} and fails on its
// missing argument; nothing is written and no command runs.
func TestTrailingGarbageRunsNothing(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	ctx := context.Background()
	if got := Execute(ctx, dir, "Write", `{"file_path": "w.txt", "content": "x"}]`); got != "ValueError: file_path is required" {
		t.Errorf("Write: %q", got)
	}
	if got := Execute(ctx, dir, "Bash", `{"command": "touch ran"}}`); got != "ValueError: command is required" {
		t.Errorf("Bash: %q", got)
	}
	for _, name := range []string{"w.txt", "ran"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: the call acted", name)
		}
	}
}

func TestNonFiniteValuesInTools(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"a.txt": "one\ntwo\n"})
	ctx := context.Background()
	tests := []struct{ tool, raw, want string }{
		{"Write", `{"file_path": "w.txt", "content": NaN}`, "Wrote w.txt (3 bytes)."},
		{"Write", `{"file_path": "w.txt", "content": [Infinity, -Infinity]}`, "Wrote w.txt (11 bytes)."},
		{"Read", `{"file_path": "a.txt", "offset": NaN}`, "ValueError: cannot convert float NaN to integer"},
		{"Read", `{"file_path": "a.txt", "limit": Infinity}`, "OverflowError: cannot convert float infinity to integer"},
		// Commands that outlast their timeout, so that the timeout shows (a command that must
		// end within 0.1 s of bash's start fails on a busy machine).
		{"Bash", `{"command": "sleep 5", "timeout": NaN}`, "Timed out after 0.1s\nSTDOUT:\n\nSTDERR:\n"},
		{"Bash", `{"command": "sleep 5", "timeout": -Infinity}`, "Timed out after 0.1s\nSTDOUT:\n\nSTDERR:\n"},
		{"Bash", `{"command": "touch inf", "timeout": Infinity}`, "OverflowError: cannot convert float infinity to integer"},
		{"Bash", `{"command": "sleep 5", "timeout": "-nan"}`, "Timed out after 0.1s\nSTDOUT:\n\nSTDERR:\n"},
		{"Bash", `{"command": "touch big", "timeout": 1e10}`, "OverflowError: timeout is too large"},
		{"Bash", `{"command": "touch big", "timeout_ms": 3e9}`, "OverflowError: timeout is too large"},
		{"Bash", `{"command": "touch big", "timeout": 9.3e15}`, "OverflowError: timestamp too large to convert to C _PyTime_t"},
		{"Bash", `{"command": "touch big", "timeout": 1e308}`, "OverflowError: timestamp too large to convert to C _PyTime_t"},
		{"Bash", `{"command": "echo a\u0000b"}`, "ValueError: embedded null byte"},
		{"Bash", `{"command": "echo hi", "timeout": "٠٫٥"}`, "ValueError: could not convert string to float: '٠٫٥'"},
		{"Bash", `{"command": "sleep 5", "timeout": "١"}`, "Timed out after 1.0s\nSTDOUT:\n\nSTDERR:\n"},
	}
	for _, tt := range tests {
		if got := Execute(ctx, dir, tt.tool, tt.raw); got != tt.want {
			t.Errorf("%s %s\n got: %q\nwant: %q", tt.tool, tt.raw, got, tt.want)
		}
	}
	for _, name := range []string{"inf", "big"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: a command ran that the reference never lets run", name)
		}
	}
	if got := readFile(t, filepath.Join(dir, "w.txt")); got != "[inf, -inf]" {
		t.Errorf("w.txt = %q", got)
	}
}

func TestPythonNumbers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 300)
	for _, tt := range []struct {
		in, want string
	}{
		{"٢", "2"}, {"２", "2"}, {"\u00a02\u2003", "2"}, {"𝟐", "2"}, {"1_0", "10"},
		{"\x1c3", "ValueError: invalid literal for int() with base 10: '\\x1c3'"},
		{long, "ValueError: invalid literal for int() with base 10: '" + long[:199]},
		{strings.Repeat("1", 4301) + "x", "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"},
		{"\U00011F52", "ValueError: invalid literal for int() with base 10: '\\U00011f52'"}, // a Unicode 15 digit: not in Python 3.11
	} {
		n, err := pyIntValue(tt.in)
		got := strconv.FormatInt(n, 10)
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("int(%.40q) = %.300q, want %.300q", tt.in, got, tt.want)
		}
	}
}

func TestReprUsesPython311Tables(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"\u0CF3":     `'\u0cf3'`,     // Unicode 15: not printable in Python 3.11
		"\U0001F6DC": `'\U0001f6dc'`, // Unicode 15
		"\U0001FA77": `'\U0001fa77'`,
		"é😀":         `'é😀'`,
		"\u00ad":     `'\xad'`,
		"a\xffb":     `'a\udcffb'`,
	} {
		if got := pyStrRepr(in); got != want {
			t.Errorf("repr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestWriteErrorsNameNoFile(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	if err := os.Symlink("/dev/full", filepath.Join(dir, "full.txt")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := Execute(ctx, dir, "Write", `{"file_path": "full.txt", "content": "x"}`); got != "OSError: [Errno 28] No space left on device" {
		t.Errorf("Write to a full device: %q", got)
	}
	// Nothing to write, nothing fails; the path resolves outside the workdir, so it is shown as given.
	if got := Execute(ctx, dir, "Write", `{"file_path": "full.txt", "content": ""}`); got != "Wrote "+dir+"/full.txt (0 bytes)." {
		t.Errorf("empty Write to a full device: %q", got)
	}
}

func TestGlobEdges(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"file.txt": "f", "d/x.txt": "x"})
	if err := os.Symlink("file.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for pattern, want := range map[string]string{
		"file.txt/**": "file.txt",
		"link.txt/**": "file.txt",
		"nope/**":     "No files matched.",
	} {
		if got := Execute(ctx, dir, "Glob", jsonArgs(t, map[string]any{"pattern": pattern})); got != want {
			t.Errorf("Glob %s = %q, want %q", pattern, got, want)
		}
	}
	for _, name := range []string{"\xff.txt", "\xc3\xa9.txt", "\xf0\x9f\x98\x80.txt"} {
		if err := os.WriteFile(filepath.Join(dir, "d", name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Python sorts the surrogateescape'd names: é (U+E9) < U+DCFF < 😀 (U+1F600).
	want := "d/x.txt\nd/é.txt\nd/\uFFFD.txt\nd/😀.txt"
	if got := Execute(ctx, dir, "Glob", `{"pattern": "d/*"}`); got != want {
		t.Errorf("Glob d/* = %q, want %q", got, want)
	}
	if os.Getuid() != 0 {
		if err := os.Chmod(filepath.Join(dir, "d"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(dir, "d"), 0o755)
		if got := Execute(ctx, dir, "Glob", `{"pattern": "d/x.txt"}`); !strings.HasPrefix(got, "No files matched.") {
			t.Errorf("literal under an unsearchable folder: %q", got)
		}
	}
}

// TestHomeThatIsATilde: Path.expanduser refuses a home that still starts with "~". Not
// parallel: it sets HOME.
func TestHomeThatIsATilde(t *testing.T) {
	dir := setup(t, nil)
	for _, home := range []string{"~", "~/x", "~nosuchuser"} {
		t.Setenv("HOME", home)
		if got := Execute(context.Background(), dir, "Read", `{"file_path": "~/a.txt"}`); got != "RuntimeError: Could not determine home directory." {
			t.Errorf("HOME=%q: %q", home, got)
		}
	}
	t.Setenv("HOME", "")
	if got := Execute(context.Background(), dir, "Read", `{"file_path": "~/nope"}`); got != "FileNotFoundError: [Errno 2] No such file or directory: '/nope'" {
		t.Errorf("HOME empty: %q", got)
	}
}

func TestPythonCoercesLocale(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, true},
		{map[string]string{"LANG": "C.UTF-8"}, false},
		{map[string]string{"LANG": "C.utf8"}, false},
		{map[string]string{"LANG": "C"}, true},
		{map[string]string{"LC_CTYPE": "POSIX", "LANG": "C.UTF-8"}, true},
		{map[string]string{"LC_CTYPE": "C.UTF-8"}, false},
		{map[string]string{"LANG": "xx_NOWHERE.UTF-8"}, true},
		{map[string]string{"LC_ALL": "C"}, false},
		{map[string]string{"LC_ALL": ""}, true},
		{map[string]string{"PYTHONCOERCECLOCALE": "0"}, false},
		{map[string]string{"PYTHONCOERCECLOCALE": "1"}, true},
	} {
		if got := pythonCoercesLocale(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("coerce with %v = %v, want %v", tt.env, got, tt.want)
		}
	}
	if got := normalizeLocale("en_US.UTF-8@euro"); got != "en_US.utf8@euro" {
		t.Errorf("normalizeLocale = %q", got)
	}
}

func TestBashEnvironmentMarks(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	got := Execute(context.Background(), dir, "Bash", `{"command": "echo $SHLVL $OLDPWD $PWD"}`)
	want := "Exit code: 0\nSTDOUT:\n2 " + dir + " " + dir + "\n\nSTDERR:\n"
	if os.Getenv("SHLVL") != "" {
		want = strings.Replace(want, "\n2 ", "\n"+strconv.Itoa(bashShlvl(os.Getenv("SHLVL"))+2)+" ", 1)
	}
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
