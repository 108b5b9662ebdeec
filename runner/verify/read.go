package verify

import (
	"strconv"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/clip"
)

// Status is one test's result.
type Status string

// Test results. A test that errors (JUnit <error>) or is cut off by a crash is a fail.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Limits on what Read keeps from untrusted output.
const (
	// tailLines is how many lines of readable output an Outcome keeps.
	tailLines = 200
	// maxLineLen cuts longer lines in a tail (in bytes, on a rune boundary), so a tail
	// stays small enough for a PR body.
	maxLineLen = 300
	// maxTests bounds the per-test map; beyond it further tests are not recorded.
	maxTests = 100_000
	// maxNameLen bounds one test name.
	maxNameLen = 1024
	// maxReportBytes bounds a JUnit report; a larger one is ignored.
	maxReportBytes = 32 << 20
)

// Outcome is one run of the test command.
type Outcome struct {
	Command  string
	ExitCode int
	// TimedOut and Duration are filled by the caller, who ran the command.
	TimedOut bool
	Duration time.Duration
	// Tail is the last tailLines lines of readable output.
	Tail string
	// Tests maps a qualified test name to its result; nil when the results could not
	// be read per test (unknown tool, missing or garbled report).
	Tests map[string]Status
}

// Failed reports whether the run failed: a timeout, a non-zero exit, or a failing test.
func (o Outcome) Failed() bool {
	if o.TimedOut || o.ExitCode != 0 {
		return true
	}
	for _, s := range o.Tests {
		if s == Fail {
			return true
		}
	}
	return false
}

// Read interprets one run. output is what the command printed (standard output, and
// standard error too if the caller merged them; non-JSON lines are kept as text);
// report is the content of plan.ReportFile, or nil. Both are untrusted: Read never
// panics, bounds what it keeps, and leaves Tests nil when nothing usable was found.
// The per-test results are claims made by code the model could edit; they are a
// signal for the report, not a proof.
func Read(plan Plan, exitCode int, output, report []byte) Outcome {
	o := Outcome{Command: plan.Display, ExitCode: exitCode}
	switch plan.Format {
	case FormatGoJSON:
		text, tests := readGoJSON(output, exitCode)
		o.Tail, o.Tests = tail(text, tailLines), tests
	case FormatJUnit:
		o.Tail, o.Tests = tail(output, tailLines), readJUnit(report)
	case FormatUnittest:
		o.Tail, o.Tests = tail(output, tailLines), readUnittest(output)
	default:
		o.Tail = tail(output, tailLines)
	}
	return o
}

// tail returns the last n lines of output as readable text: invalid UTF-8 replaced,
// terminal escape sequences and control characters removed, carriage-return progress
// lines reduced to their final state, and each line cut at maxLineLen bytes.
func tail(output []byte, n int) string {
	if n <= 0 || len(output) == 0 {
		return ""
	}
	// Work only on the end of the output: find the start of the last n lines.
	end := len(output)
	if output[end-1] == '\n' {
		end--
	}
	start, count := end, 0
	for start > 0 {
		if output[start-1] == '\n' {
			count++
			if count == n {
				break
			}
		}
		start--
	}
	lines := strings.Split(string(output[start:end]), "\n")
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(cleanLine(line))
	}
	return b.String()
}

// cleanLine makes one line of terminal output safe and readable.
func cleanLine(line string) string {
	line = strings.ToValidUTF8(line, "\uFFFD")
	line = stripEscapes(line)
	// "50%\r100%" shows as "100%" on a terminal; a trailing \r (CRLF) changes nothing.
	line = strings.TrimRight(line, "\r")
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = strings.Map(func(r rune) rune {
		if r == '\t' || (r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0)) {
			return r
		}
		return -1 // other control characters, including stray carriage returns
	}, line)
	if len(line) > maxLineLen {
		head := clip.Prefix(line, maxLineLen)
		line = head + " [" + strconv.Itoa(len(line)-len(head)) + " bytes cut]"
	}
	return line
}

// stripEscapes removes ANSI escape sequences: CSI (ESC [ ... final), OSC (ESC ] ...
// BEL or ESC \) and two-byte escapes.
func stripEscapes(s string) string {
	if !strings.ContainsRune(s, 0x1b) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && !(s[j] >= 0x40 && s[j] <= 0x7e) {
				j++
			}
			i = j
		case ']':
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return b.String()
}

// worse returns the more severe of two statuses for the same test.
func worse(a, b Status) Status {
	rank := map[Status]int{Pass: 0, Skip: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// record sets tests[key], merging with an earlier result, within the size limits.
func record(tests map[string]Status, key string, s Status) {
	if len(key) > maxNameLen {
		key = clip.Prefix(key, maxNameLen) + "..."
	}
	if old, ok := tests[key]; ok {
		tests[key] = worse(old, s)
		return
	}
	if len(tests) < maxTests {
		tests[key] = s
	}
}
