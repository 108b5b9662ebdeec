package scanner

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Scanner is one command the operator configured: Name labels it in reports and names its
// SARIF file; Command is run by bash (a login shell, as the tests are) in the workspace.
type Scanner struct {
	Name    string
	Command string
}

// Defaults and bounds of the scanners' settings.
const (
	// DefaultTimeout is FROGNANO_SCANNER_TIMEOUT's default: how long one scanner may run.
	DefaultTimeout = 5 * time.Minute
	// MaxScanners bounds FROGNANO_SCANNERS: each is a sandbox of its own after the tests.
	MaxScanners = 16
	// Placeholder in a command is replaced by the SARIF path, shell-quoted.
	Placeholder = "{sarif}"
	// EnvSARIF names the variable that holds the SARIF path in the scanner's environment.
	EnvSARIF = "FROGNANO_SARIF"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Parse reads FROGNANO_SCANNERS: entries separated by ";;" or line breaks, each NAME=COMMAND,
// NAME lower-case letters, digits, '-' and '_' (at most 32, unique), COMMAND a shell command
// line ("{sarif}" in it is replaced by the SARIF path). Blank entries are skipped; "" is no
// scanner. A bad entry is an error that names its position and name, never its command (an
// operator's command line can hold anything).
func Parse(s string) ([]Scanner, error) {
	var out []Scanner
	seen := map[string]bool{}
	var errs []string
	n := 0
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		for _, entry := range strings.Split(line, ";;") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			n++
			name, cmd, ok := strings.Cut(entry, "=")
			name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
			switch {
			case !ok || !nameRE.MatchString(name):
				errs = append(errs, fmt.Sprintf("entry %d is not NAME=COMMAND with NAME of a-z, 0-9, '-' and '_' (at most 32)", n))
			case seen[name]:
				errs = append(errs, fmt.Sprintf("entry %d: the name %q is used twice", n, name))
			case cmd == "":
				errs = append(errs, fmt.Sprintf("entry %d (%s) has no command", n, name))
			default:
				seen[name] = true
				out = append(out, Scanner{Name: name, Command: cmd})
			}
		}
	}
	if n > MaxScanners {
		errs = append(errs, fmt.Sprintf("%d scanners; at most %d", n, MaxScanners))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("FROGNANO_SCANNERS: %s (entries are NAME=COMMAND, separated by ';;' or line breaks)", strings.Join(errs, "; "))
	}
	return out, nil
}

// Level is a finding's SARIF level, from the least to the most severe.
type Level int

// The SARIF levels.
const (
	LevelNone Level = iota
	LevelNote
	LevelWarning
	LevelError
)

var levelNames = [...]string{"none", "note", "warning", "error"}

func (l Level) String() string {
	if l < LevelNone || l > LevelError {
		return "unknown"
	}
	return levelNames[l]
}

// parseLevel reads a SARIF level; ok is false for anything else.
func parseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if s == n {
			return Level(i), true
		}
	}
	return 0, false
}

// FailLevel is FROGNANO_SCANNER_FAIL_LEVEL: a finding on a changed line at or above it makes
// the check run fail. "none" fails for no finding.
type FailLevel string

// The fail levels; DefaultFailLevel is the setting's default.
const (
	FailNone         FailLevel = "none"
	FailNote         FailLevel = "note"
	FailWarning      FailLevel = "warning"
	FailError        FailLevel = "error"
	DefaultFailLevel           = FailError
)

// ParseFailLevel reads FROGNANO_SCANNER_FAIL_LEVEL; "" is DefaultFailLevel.
func ParseFailLevel(s string) (FailLevel, error) {
	switch f := FailLevel(strings.TrimSpace(s)); f {
	case "":
		return DefaultFailLevel, nil
	case FailNone, FailNote, FailWarning, FailError:
		return f, nil
	}
	return "", fmt.Errorf("FROGNANO_SCANNER_FAIL_LEVEL is %q: want none, note, warning or error", s)
}

// Fails reports whether a finding at level l fails the check. The zero FailLevel is the default.
func (f FailLevel) Fails(l Level) bool {
	if f == "" {
		f = DefaultFailLevel
	}
	if f == FailNone {
		return false
	}
	min, ok := parseLevel(string(f))
	if !ok {
		min = LevelError // not made by ParseFailLevel: the default
	}
	return l >= min
}
