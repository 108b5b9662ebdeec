package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{
		"a.txt":          "one\ntwo\nthree\n",
		"crlf.txt":       "x\r\ny\rz\vw\u2028v\u0085u\x1cs\fr",
		"bad.bin":        "ok\xff\xfe\xe2\x82A\xed\xa0\x80\n\xf0\x90\x80",
		"empty.txt":      "",
		"src/pkg/mod.go": "package pkg\n",
	})
	if err := os.Symlink("a.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "outside")); err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"Whole", map[string]any{"file_path": "a.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"PathFallback", map[string]any{"path": "a.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"EmptyFilePathFallsBack", map[string]any{"file_path": "", "path": "a.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"Absolute", map[string]any{"file_path": dir + "/a.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"DotDotInside", map[string]any{"file_path": "./src/../a.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"SymlinkShownResolved", map[string]any{"file_path": "alias.txt"}, "a.txt\n1. one\n2. two\n3. three"},
		{"OutsideShownAsGiven", map[string]any{"file_path": "outside"}, dir + "/outside\n1. " + strings.TrimRight(string(host), "\n")},
		{"Nested", map[string]any{"file_path": "src/pkg/mod.go"}, "src/pkg/mod.go\n1. package pkg"},
		{"Offset", map[string]any{"file_path": "a.txt", "offset": 2}, "a.txt\n2. two\n3. three"},
		{"OffsetZeroIsOne", map[string]any{"file_path": "a.txt", "offset": 0, "limit": 1}, "a.txt\n1. one"},
		{"NegativeOffsetAndLimit", map[string]any{"file_path": "a.txt", "offset": -5, "limit": -1}, "a.txt\n1. one\n2. two\n3. three"},
		{"LimitZeroMeansAll", map[string]any{"file_path": "a.txt", "limit": 0}, "a.txt\n1. one\n2. two\n3. three"},
		{"OffsetAndLimit", map[string]any{"file_path": "a.txt", "offset": 2, "limit": 1}, "a.txt\n2. two"},
		{"OffsetPastEnd", map[string]any{"file_path": "a.txt", "offset": 4}, "a.txt\n"},
		{"HugeLimit", map[string]any{"file_path": "a.txt", "limit": 1e30}, "a.txt\n1. one\n2. two\n3. three"},
		{"StringNumbers", map[string]any{"file_path": "a.txt", "offset": " 2 ", "limit": "1"}, "a.txt\n2. two"},
		{"FloatTruncated", map[string]any{"file_path": "a.txt", "offset": 1.9, "limit": 2.5}, "a.txt\n1. one\n2. two"},
		{"NullAndEmptyAreDefaults", map[string]any{"file_path": "a.txt", "offset": nil, "limit": ""}, "a.txt\n1. one\n2. two\n3. three"},
		{"TrueIsOne", map[string]any{"file_path": "a.txt", "offset": true}, "a.txt\n1. one\n2. two\n3. three"},
		{"EmptyFile", map[string]any{"file_path": "empty.txt"}, "empty.txt\n"},
		{"PythonLineBoundaries", map[string]any{"file_path": "crlf.txt"}, "crlf.txt\n1. x\n2. y\n3. z\n4. w\n5. v\n6. u\n7. s\n8. r"},
		{"InvalidUTF8Replaced", map[string]any{"file_path": "bad.bin"}, "bad.bin\n1. ok\uFFFD\uFFFD\uFFFDA\uFFFD\uFFFD\uFFFD\n2. \uFFFD"},
		{"Missing", map[string]any{"file_path": "nope/x.py"}, "FileNotFoundError: [Errno 2] No such file or directory: '" + dir + "/nope/x.py'"},
		{"Directory", map[string]any{"file_path": "src"}, "IsADirectoryError: [Errno 21] Is a directory: '" + dir + "/src'"},
		{"WorkdirItself", map[string]any{"file_path": "."}, "IsADirectoryError: [Errno 21] Is a directory: '" + dir + "'"},
		{"ThroughAFile", map[string]any{"file_path": "a.txt/x"}, "NotADirectoryError: [Errno 20] Not a directory: '" + dir + "/a.txt/x'"},
		{"QuoteInName", map[string]any{"file_path": "it's"}, `FileNotFoundError: [Errno 2] No such file or directory: "` + dir + `/it's"`},
		{"ControlCharsEscaped", map[string]any{"file_path": "t\tb\u200b"}, `FileNotFoundError: [Errno 2] No such file or directory: '` + dir + `/t\tb\u200b'`},
		{"NumberPath", map[string]any{"file_path": 5}, "FileNotFoundError: [Errno 2] No such file or directory: '" + dir + "/5'"},
		{"NulInPath", map[string]any{"file_path": "a\x00b"}, "ValueError: embedded null byte"},
		{"UnknownUser", map[string]any{"file_path": "~nosuchuser-frognano/x"}, "RuntimeError: Could not determine home directory."},
		{"MissingArgument", map[string]any{}, "ValueError: file_path is required"},
		{"BadOffset", map[string]any{"file_path": "a.txt", "offset": "2.0"}, "ValueError: invalid literal for int() with base 10: '2.0'"},
		{"ListOffset", map[string]any{"file_path": "a.txt", "offset": []any{1}}, "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'"},
		{"MissingFileBeatsBadOffset", map[string]any{"file_path": "nope", "offset": "x"}, "FileNotFoundError: [Errno 2] No such file or directory: '" + dir + "/nope'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, dir, "Read", tt.args); got != tt.want {
				t.Errorf("Read(%v)\n got: %q\nwant: %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestReadTruncation(t *testing.T) {
	t.Parallel()
	// "f.txt\n" + "1. " is 9 characters; the rest is one line of two-byte characters,
	// so a byte count would cut in the wrong place.
	tests := []struct {
		name    string
		lineLen int
		want    string // suffix of the observation
	}{
		{"ExactlyAtLimit", readOutputChars - 9, "é"},
		{"OneOver", readOutputChars - 8, "é\n[truncated 1 chars]"},
		{"FarOver", readOutputChars * 3, "é\n[truncated 40009 chars]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, map[string]string{"f.txt": strings.Repeat("é", tt.lineLen) + "\n"})
			got := run(t, dir, "Read", map[string]any{"file_path": "f.txt"})
			if !strings.HasSuffix(got, tt.want) {
				t.Fatalf("observation ends %q, want suffix %q", got[max(0, len(got)-40):], tt.want)
			}
			body, _, _ := strings.Cut(got, "\n[truncated")
			if n := len([]rune(body)); n > readOutputChars {
				t.Errorf("kept %d characters, limit %d", n, readOutputChars)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     map[string]any
		want     string
		file     string // path relative to the workdir, checked when wantBody is set
		wantBody string
	}{
		{"CreatesParents", map[string]any{"file_path": "new/dir/f.txt", "content": "héllo\n"}, "Wrote new/dir/f.txt (6 bytes).", "new/dir/f.txt", "héllo\n"},
		{"CountsCharactersNotBytes", map[string]any{"file_path": "e.txt", "content": "😀é"}, "Wrote e.txt (2 bytes).", "e.txt", "😀é"},
		{"Overwrites", map[string]any{"file_path": "a.txt", "content": "new"}, "Wrote a.txt (3 bytes).", "a.txt", "new"},
		{"MissingContentIsEmpty", map[string]any{"file_path": "f.txt"}, "Wrote f.txt (0 bytes).", "f.txt", ""},
		{"NullContentIsNone", map[string]any{"file_path": "f.txt", "content": nil}, "Wrote f.txt (4 bytes).", "f.txt", "None"},
		{"CRLFKept", map[string]any{"file_path": "c.txt", "content": "x\r\ny"}, "Wrote c.txt (4 bytes).", "c.txt", "x\r\ny"},
		{"TrailingSlashDropped", map[string]any{"file_path": "d/", "content": "x"}, "Wrote d (1 bytes).", "d", "x"},
		{"PathFallback", map[string]any{"path": "p.txt", "content": "x"}, "Wrote p.txt (1 bytes).", "p.txt", "x"},
		{"ParentIsFile", map[string]any{"file_path": "a.txt/y", "content": "x"}, "FileExistsError: [Errno 17] File exists: '%s/a.txt'", "", ""},
		{"GrandparentIsFile", map[string]any{"file_path": "a.txt/x/y", "content": "x"}, "NotADirectoryError: [Errno 20] Not a directory: '%s/a.txt/x'", "", ""},
		{"OntoDirectory", map[string]any{"file_path": "src", "content": "x"}, "IsADirectoryError: [Errno 21] Is a directory: '%s/src'", "", ""},
		{"MissingPath", map[string]any{"content": "x"}, "ValueError: file_path is required", "", ""},
		{"NulInPath", map[string]any{"file_path": "x\x00y", "content": "x"}, "ValueError: embedded null byte", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, map[string]string{"a.txt": "old", "src/": ""})
			want := tt.want
			if strings.Contains(want, "%s") {
				want = strings.ReplaceAll(want, "%s", dir)
			}
			if got := run(t, dir, "Write", tt.args); got != want {
				t.Errorf("Write(%v)\n got: %q\nwant: %q", tt.args, got, want)
			}
			if tt.file != "" {
				if got := readFile(t, filepath.Join(dir, tt.file)); got != tt.wantBody {
					t.Errorf("file %s holds %q, want %q", tt.file, got, tt.wantBody)
				}
			}
		})
	}
}

// TestWriteNonStringContent checks str() of JSON values other than strings, written as
// raw JSON because Go's encoder would print 1.0 as 1.
func TestWriteNonStringContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"Null", `null`, "None"},
		{"True", `true`, "True"},
		{"Int", `-0`, "0"},
		{"BigInt", `123456789012345678901234567890`, "123456789012345678901234567890"},
		{"FloatOne", `1.0`, "1.0"},
		{"FloatExponent", `1e22`, "1e+22"},
		{"List", `[1.0, 1e16, 1e-5, 0.0001, "it's", true, null]`, `[1.0, 1e+16, 1e-05, 0.0001, "it's", True, None]`},
		{"DictKeepsFirstPositionLastValue", `{"b": 1, "a": "x\ny", "b": 2}`, `{'b': 2, 'a': 'x\ny'}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, nil)
			got := Execute(context.Background(), dir, "Write", `{"file_path": "f.txt", "content": `+tt.content+`}`)
			if want := fmt.Sprintf("Wrote f.txt (%d bytes).", utf8.RuneCountInString(tt.want)); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if body := readFile(t, filepath.Join(dir, "f.txt")); body != tt.want {
				t.Errorf("file holds %q, want %q", body, tt.want)
			}
		})
	}
}

func TestWriteOutsideWorkdirShowsAbsolutePath(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	other := setup(t, nil)
	got := run(t, dir, "Write", map[string]any{"file_path": other + "/q/r.txt", "content": "x"})
	if want := "Wrote " + other + "/q/r.txt (1 bytes)."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEdit(t *testing.T) {
	t.Parallel()
	const dup = "foo bar foo baz foo\n"
	tests := []struct {
		name     string
		file     string
		args     map[string]any
		want     string
		wantBody string // expected content of file afterwards
	}{
		{"Single", dup, map[string]any{"old_string": "bar", "new_string": "BAR"}, "Edited f.txt (1 replacement).", "foo BAR foo baz foo\n"},
		{"Ambiguous", dup, map[string]any{"old_string": "foo", "new_string": "F"}, "ValueError: old_string matched 3 times; set replace_all=true or use a more specific old_string", dup},
		{"ReplaceAllTrue", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": true}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllStringTrue", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": "true"}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllStringOne", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": "1"}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllYesSpacedUpper", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": " YES "}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllOn", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": "on"}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllIntOne", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": 1}, "Edited f.txt (3 replacements).", "F bar F baz F\n"},
		{"ReplaceAllFloatOneIsFalse", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": 1.5}, "ValueError: old_string matched 3 times; set replace_all=true or use a more specific old_string", dup},
		{"ReplaceAllOff", dup, map[string]any{"old_string": "foo", "new_string": "F", "replace_all": "off"}, "ValueError: old_string matched 3 times; set replace_all=true or use a more specific old_string", dup},
		{"ReplaceAllWithOneMatch", dup, map[string]any{"old_string": "bar", "new_string": "B", "replace_all": true}, "Edited f.txt (1 replacement).", "foo B foo baz foo\n"},
		{"NullNewStringDeletes", dup, map[string]any{"old_string": "foo ", "new_string": nil, "replace_all": "yes"}, "Edited f.txt (2 replacements).", "bar baz foo\n"},
		{"EmptyOld", dup, map[string]any{"old_string": "", "new_string": "x"}, "ValueError: old_string must be non-empty", dup},
		{"ZeroOldIsEmpty", dup, map[string]any{"old_string": 0, "new_string": "x"}, "ValueError: old_string must be non-empty", dup},
		{"NotFound", dup, map[string]any{"old_string": "zzz", "new_string": "x"}, "ValueError: old_string was not found", dup},
		{"CRLFFileBecomesLF", "a\r\nb\r\n", map[string]any{"old_string": "b", "new_string": "B"}, "Edited f.txt (1 replacement).", "a\nB\n"},
		{"CRLFNeverMatches", "a\r\nb\r\n", map[string]any{"old_string": "a\r\n", "new_string": "x"}, "ValueError: old_string was not found", "a\r\nb\r\n"},
		{"InvalidBytesReplacedOnWrite", "ok\xff!", map[string]any{"old_string": "ok", "new_string": "OK"}, "Edited f.txt (1 replacement).", "OK\uFFFD!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, map[string]string{"f.txt": tt.file})
			args := map[string]any{"file_path": "f.txt"}
			for k, v := range tt.args {
				args[k] = v
			}
			if got := run(t, dir, "Edit", args); got != tt.want {
				t.Errorf("Edit(%v)\n got: %q\nwant: %q", args, got, tt.want)
			}
			if got := readFile(t, filepath.Join(dir, "f.txt")); got != tt.wantBody {
				t.Errorf("file holds %q, want %q", got, tt.wantBody)
			}
		})
	}
}

func TestEditErrorsBeforeReading(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"src/": ""})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"MissingPath", map[string]any{"old_string": "a"}, "ValueError: file_path is required"},
		{"EmptyOldOnMissingFile", map[string]any{"file_path": "nope", "old_string": ""}, "ValueError: old_string must be non-empty"},
		{"MissingFile", map[string]any{"file_path": "nope", "old_string": "a"}, "FileNotFoundError: [Errno 2] No such file or directory: '" + dir + "/nope'"},
		{"Directory", map[string]any{"file_path": "src", "old_string": "a"}, "IsADirectoryError: [Errno 21] Is a directory: '" + dir + "/src'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, dir, "Edit", tt.args); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"a.txt": "x\n"})
	tests := []struct {
		name, tool, args, want string
	}{
		{"UnknownTool", "Frob", `{}`, "Unknown tool: Frob"},
		{"EmptyToolName", "", `{}`, "Unknown tool: "},
		{"LowercaseIsUnknown", "read", `{"file_path":"a.txt"}`, "Unknown tool: read"},
		{"NotJSON", "Read", `file_path=a.txt`, "ValueError: file_path is required"},
		{"JSONArray", "Read", `["a.txt"]`, "ValueError: file_path is required"},
		{"JSONString", "Glob", `"*.txt"`, "ValueError: pattern is required"},
		{"TrailingData", "Read", `{"file_path":"a.txt"} x`, "ValueError: file_path is required"},
		{"EmptyArguments", "Bash", ``, "ValueError: command is required"},
		{"DuplicateKeyLastWins", "Read", `{"file_path":"nope","file_path":"a.txt"}`, "a.txt\n1. x"},
		{"Valid", "Read", `{"file_path":"a.txt"}`, "a.txt\n1. x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Execute(context.Background(), dir, tt.tool, tt.args); got != tt.want {
				t.Errorf("Execute(%q, %q) = %q, want %q", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

func TestMissingWorkdir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(setup(t, nil), "gone")
	got := Execute(context.Background(), dir, "Read", `{"file_path":"a"}`)
	want := "leaf tool_runner error: FileNotFoundError: [Errno 2] No such file or directory: '" + dir + "'"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
