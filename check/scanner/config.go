package scanner

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Scanner is one command the operator configured: Name labels it in reports and names its
// SARIF file; Command is run by bash (a login shell, as the tests are) in the workspace.
type Scanner struct {
	Name    string
	Command string
	// Tools are the known tools (tools.go) the command names or the operator named (tool=).
	Tools []string
	// Config are the patterns of the scanner's configuration files: its tools' and the
	// operator's (config=). Each file of the patched tree they name is scanned as the base
	// commit has it, or not at all when the base has none (runner/audit's scanners.go).
	Config []Pattern
	// Code says whether the scanner runs the repository's code: the operator's code=, else
	// what the command and its tools tell.
	Code CodeJudgement
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

// optionsHelp is what a bad option is told.
const optionsHelp = "options are config=PATTERN[,PATTERN...], tool=NAME[,NAME...] and code=runs or code=none"

// Parse reads FROGNANO_SCANNERS: entries separated by ";;" or line breaks, each NAME=COMMAND or
// NAME[OPTIONS]=COMMAND. NAME is lower-case letters, digits, '-' and '_' (at most 32, unique);
// COMMAND a shell command line ("{sarif}" in it is replaced by the SARIF path). OPTIONS,
// separated by spaces, are:
//
//   - config=PATTERN[,PATTERN...]: more configuration files of the scanner (Pattern), on top
//     of those of the known tools its command names;
//   - tool=NAME[,NAME...]: the scanner is that known tool (a wrapper script whose command does
//     not name it), so its configuration files and what frognano knows of it apply;
//   - code=runs or code=none: whether the scanner runs the repository's code, which decides
//     what the report promises of its findings; it overrides what frognano would guess.
//
// Blank entries are skipped; "" is no scanner. A bad entry is an error that names its
// position and name, never its command (an operator's command line can hold anything).
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
			sc, err := parseEntry(entry)
			switch {
			case err != nil && sc.Name == "":
				errs = append(errs, fmt.Sprintf("entry %d %s", n, err))
			case err != nil:
				errs = append(errs, fmt.Sprintf("entry %d (%s) %s", n, sc.Name, err))
			case seen[sc.Name]:
				errs = append(errs, fmt.Sprintf("entry %d: the name %q is used twice", n, sc.Name))
			default:
				seen[sc.Name] = true
				out = append(out, sc)
			}
		}
	}
	if n > MaxScanners {
		errs = append(errs, fmt.Sprintf("%d scanners; at most %d", n, MaxScanners))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("FROGNANO_SCANNERS: %s (entries are NAME=COMMAND or NAME[OPTIONS]=COMMAND, separated by ';;' or line breaks)", strings.Join(errs, "; "))
	}
	return out, nil
}

// parseEntry reads one NAME[OPTIONS]=COMMAND. Its error is a sentence's end after "entry N
// (NAME)"; it sets Name once the name is good, so the error can name it.
func parseEntry(entry string) (Scanner, error) {
	var sc Scanner
	head, cmd, ok := strings.Cut(entry, "=")
	var opts string
	if i := strings.IndexByte(entry, '['); i >= 0 && (!ok || i < len(head)) {
		end := strings.IndexByte(entry[i:], ']')
		if end < 0 {
			return sc, errors.New("has a '[' without its ']'")
		}
		head, opts = entry[:i], entry[i+1:i+end]
		rest := strings.TrimSpace(entry[i+end+1:])
		cmd, ok = strings.CutPrefix(rest, "=")
	}
	name := strings.TrimSpace(head)
	if !ok || !nameRE.MatchString(name) {
		return sc, errors.New("is not NAME=COMMAND with NAME of a-z, 0-9, '-' and '_' (at most 32)")
	}
	sc.Name, sc.Command = name, strings.TrimSpace(cmd)
	if sc.Command == "" {
		return sc, errors.New("has no command")
	}
	operator, tools, code, err := parseOptions(opts)
	if err != nil {
		return sc, err
	}
	for _, t := range detectTools(sc.Command) {
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	for _, t := range tools {
		sc.Tools = append(sc.Tools, t.Name)
	}
	sc.Config = configPatterns(tools, operator)
	if len(sc.Config) > maxPatternsPerScan {
		return sc, fmt.Errorf("has %d configuration patterns; at most %d", len(sc.Config), maxPatternsPerScan)
	}
	sc.Code = judgeCode(code, sc.Command, tools)
	return sc, nil
}

// parseOptions reads the words between '[' and ']'.
func parseOptions(s string) (config []Pattern, tools []*Tool, code Code, err error) {
	codeSet := false
	for _, w := range strings.Fields(s) {
		key, val, ok := strings.Cut(w, "=")
		if !ok || val == "" {
			return nil, nil, 0, fmt.Errorf("has an option that is not KEY=VALUE (%s)", optionsHelp)
		}
		switch key {
		case "config":
			for _, v := range strings.Split(val, ",") {
				p, err := ParsePattern(v)
				if err != nil {
					return nil, nil, 0, fmt.Errorf("has a bad config pattern %q: %v", v, err)
				}
				config = append(config, p)
			}
		case "tool":
			for _, v := range strings.Split(val, ",") {
				t := toolByName(v)
				if t == nil {
					return nil, nil, 0, fmt.Errorf("names the tool %q, which frognano does not know (known: %s; name the configuration files with config= instead)", v, toolNames())
				}
				if !slices.Contains(tools, t) {
					tools = append(tools, t)
				}
			}
		case "code":
			if codeSet {
				return nil, nil, 0, errors.New("has code= twice")
			}
			codeSet = true
			switch val {
			case "runs":
				code = CodeRuns
			case "none":
				code = CodeNone
			default:
				return nil, nil, 0, fmt.Errorf("has code=%q: want code=runs or code=none", val)
			}
		default:
			return nil, nil, 0, fmt.Errorf("has an unknown option %q (%s)", key, optionsHelp)
		}
	}
	return config, tools, code, nil
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
