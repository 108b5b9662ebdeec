package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18, section 3: when a call has more than one thing wrong with its arguments, the
// observation is the error the reference raises first. The reference checks in this order:
//
//  1. agent.py's _parse_arguments: json.loads (anything but an object is {}; the digit limit
//     and RecursionError escape; see TestArgumentsAsJSONLoads);
//  2. environment.py's _timeout, for a call named exactly "Bash": float() of timeout_ms when
//     it is not null, else of timeout, then int() of the result (infinity overflows);
//  3. environment.py's request file, json.dumps(...) written as UTF-8 (a lone surrogate
//     anywhere in the arguments fails);
//  4. tool_runner.py: the tool name, then the tool's own checks, in its code's order:
//     Read: _path (file_path, else path; expanduser), read_text, int(offset), int(limit);
//     Write: _path, str(content), mkdir of the parents, write_text;
//     Edit: _path, old_string non-empty, read_text, not found, matched K times;
//     Glob: pattern, path (expanduser), glob;
//     Bash: command, float(timeout_ms or timeout), Popen (a NUL), communicate's timeout.
//
// Steps 1 to 3 end the reference's run with tool_error; frognano gives their text as the
// observation (docs/leaf-protocol.md, section 10, item 15). Unknown arguments are ignored.
// Every row's text is what the reference pipeline gave for the same call (recorded the way
// runner/sandbox/testdata/leaf-differential.md describes).
func TestArgumentErrorPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, raw string
		want            string // {dir} stands for the workdir
	}{
		// Step 2 before step 4: the host's float(timeout) fails before the tool runner
		// looks at command. This is the call of issue 18; the tool runner alone would say
		// "command is required", but the reference never reaches it.
		{"BashTimeoutBeforeEmptyCommand", "Bash", `{"command": "", "timeout": "abc"}`,
			"ValueError: could not convert string to float: 'abc'"},
		{"BashTimeoutTypeBeforeMissingCommand", "Bash", `{"timeout": []}`,
			"TypeError: float() argument must be a string or a real number, not 'list'"},
		// _timeout reads timeout_ms first and then never looks at timeout.
		{"BashTimeoutMsBeforeTimeout", "Bash", `{"command": null, "timeout": "abc", "timeout_ms": "x"}`,
			"ValueError: could not convert string to float: 'x'"},
		{"BashTimeoutMsHidesBadTimeout", "Bash", `{"command": "", "timeout": "abc", "timeout_ms": 5000}`,
			"ValueError: command is required"},
		// int(max(0.1, inf)) + 60 in _timeout.
		{"BashInfiniteTimeoutBeforeEmptyCommand", "Bash", `{"command": "", "timeout": Infinity}`,
			"OverflowError: cannot convert float infinity to integer"},
		// max(0.1, -inf) is 0.1: nothing to refuse on the host.
		{"BashNegativeInfiniteTimeoutThenCommand", "Bash", `{"command": "", "timeout": "-inf"}`,
			"ValueError: command is required"},
		// Step 2 before step 3: _timeout runs before the request file is written.
		{"BashTimeoutBeforeSurrogate", "Bash", `{"command": "touch ran", "timeout": "abc", "x": "\ud800"}`,
			"ValueError: could not convert string to float: 'abc'"},
		{"BashSurrogateBeforeEmptyCommand", "Bash", `{"command": "", "timeout": 5, "x": "\ud800"}`,
			`UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' in position 61: surrogates not allowed`},
		// float()'s message shows the lone surrogate as repr() shows that code point.
		{"BashSurrogateTimeoutRepr", "Bash", `{"command": "", "timeout": "\ud800"}`,
			`ValueError: could not convert string to float: '\ud800'`},
		{"BashSurrogatesTimeoutMsRepr", "Bash", `{"command": "", "timeout_ms": "a\udc80\ud800b"}`,
			`ValueError: could not convert string to float: 'a\udc80\ud800b'`},
		// str(0 or "") is "": the command check comes before float(timeout) in the runner.
		{"BashFalsyCommandBeforeValidTimeout", "Bash", `{"command": 0, "timeout": "5"}`,
			"ValueError: command is required"},
		// Popen refuses the NUL before communicate() converts the timeout.
		{"BashNulBeforePollTimeout", "Bash", `{"command": "touch a\u0000b", "timeout": 1e300}`,
			"ValueError: embedded null byte"},
		// communicate()'s conversion; the reference has started the command by then,
		// frognano does not start it (section 10, item 3).
		{"BashPollTimeout", "Bash", `{"command": "touch ran", "timeout": 1e300}`,
			"OverflowError: timestamp too large to convert to C _PyTime_t"},
		// Step 1: an unterminated object is {} and the tool complains about command.
		{"BashMalformedIsEmpty", "Bash", `{"command": "", "timeout": "abc"`,
			"ValueError: command is required"},
		// _timeout only looks at a call named exactly "Bash"; the name is checked in step 4.
		{"LowercaseBashIsUnknown", "bash", `{"command": "", "timeout": "abc"}`,
			"Unknown tool: bash"},
		{"UnknownToolIgnoresTimeout", "Nope", `{"timeout": "abc"}`,
			"Unknown tool: Nope"},
		{"SurrogateBeforeUnknownTool", "Nope", `{"x": "\ud800"}`,
			`UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' in position 32: surrogates not allowed`},

		// Read: step 3, then _path, read_text, offset, limit.
		{"ReadSurrogateBeforeMissingPath", "Read", `{"offset": "abc", "x": "\ud800"}`,
			`UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' in position 49: surrogates not allowed`},
		{"ReadPathBeforeOffsetAndLimit", "Read", `{"file_path": "", "offset": "abc", "limit": []}`,
			"ValueError: file_path is required"},
		{"ReadHomeBeforeOffset", "Read", `{"file_path": "~nosuchuser/a.txt", "offset": "abc"}`,
			"RuntimeError: Could not determine home directory."},
		{"ReadMissingFileBeforeOffset", "Read", `{"file_path": "missing.txt", "offset": "abc"}`,
			"FileNotFoundError: [Errno 2] No such file or directory: '{dir}/missing.txt'"},
		{"ReadDirectoryBeforeLimit", "Read", `{"file_path": "sub", "limit": []}`,
			"IsADirectoryError: [Errno 21] Is a directory: '{dir}/sub'"},
		{"ReadOffsetBeforeLimit", "Read", `{"file_path": "a.txt", "offset": [1], "limit": "abc"}`,
			"TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'"},
		// _optional_int takes "" as absent.
		{"ReadEmptyOffsetThenLimit", "Read", `{"file_path": "a.txt", "offset": "", "limit": NaN}`,
			"ValueError: cannot convert float NaN to integer"},
		{"ReadPathFallbackThenOffset", "Read", `{"file_path": 0, "path": "a.txt", "offset": Infinity}`,
			"OverflowError: cannot convert float infinity to integer"},
		{"ReadIgnoresUnknownArgument", "Read", `{"file_path": "a.txt", "offest": "abc", "limit": 1}`,
			"a.txt\n1. one"},

		// Write: _path, then the parents, then the file; content never fails (str()).
		{"WritePathFirst", "Write", `{"content": 5}`,
			"ValueError: file_path is required"},
		{"WriteParentThroughFile", "Write", `{"file_path": "a.txt/x", "content": null}`,
			"FileExistsError: [Errno 17] File exists: '{dir}/a.txt'"},
		{"WriteIgnoresUnknownArgument", "Write", `{"file_path": "w.txt", "content": null, "mode": "abc"}`,
			"Wrote w.txt (4 bytes)."},

		// Edit: _path, old_string, then the file, then the match count.
		{"EditPathBeforeOldString", "Edit", `{"old_string": ""}`,
			"ValueError: file_path is required"},
		{"EditOldStringBeforeMissingFile", "Edit", `{"file_path": "missing.txt", "old_string": ""}`,
			"ValueError: old_string must be non-empty"},
		{"EditFalsyOldStringBeforeDirectory", "Edit", `{"file_path": "sub", "old_string": 0}`,
			"ValueError: old_string must be non-empty"},
		{"EditMissingFileBeforeNotFound", "Edit", `{"file_path": "missing.txt", "old_string": "zzz", "replace_all": "abc"}`,
			"FileNotFoundError: [Errno 2] No such file or directory: '{dir}/missing.txt'"},
		{"EditNotFoundWhateverReplaceAll", "Edit", `{"file_path": "a.txt", "old_string": "zzz", "replace_all": true}`,
			"ValueError: old_string was not found"},
		{"EditMatchCount", "Edit", `{"file_path": "a.txt", "old_string": "one", "new_string": null}`,
			"ValueError: old_string matched 2 times; set replace_all=true or use a more specific old_string"},

		// Glob: step 3, then pattern, then path.
		{"GlobPatternBeforePath", "Glob", `{"pattern": null, "path": "~nosuchuser"}`,
			"ValueError: pattern is required"},
		{"GlobSurrogateBeforePattern", "Glob", `{"pattern": [], "path": "\ud800"}`,
			`UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' in position 50: surrogates not allowed`},
		{"GlobHome", "Glob", `{"pattern": "*.txt", "path": "~nosuchuser"}`,
			"RuntimeError: Could not determine home directory."},
		{"GlobMissingPathMatchesNothing", "Glob", `{"pattern": "*.txt", "path": "missing"}`,
			"No files matched."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, map[string]string{"a.txt": "one\ntwo\none\n", "sub/": ""})
			got := Execute(context.Background(), dir, tt.tool, tt.raw)
			if want := strings.ReplaceAll(tt.want, "{dir}", dir); got != want {
				t.Errorf("%s %s\n got: %q\nwant: %q", tt.tool, tt.raw, got, want)
			}
			// No row may run a command: each stops at an argument error first.
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Errorf("%s %s ran its command", tt.tool, tt.raw)
			}
		})
	}
}
