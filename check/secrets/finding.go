package secrets

import (
	"fmt"
	"strings"
)

// Finding is one secret the detector found: the gitleaks rule that matched, the file, the
// line in the published file (0: in the file's path), and why it does not refuse the patch
// (Refuses when it does). It never holds the value, nor the line's text: a value in the path
// is replaced in File by "[secret: RULE]".
type Finding struct {
	Rule    string
	File    string
	Line    int
	Allowed Allowance `json:",omitempty"`
}

// Where says where in the file the value is: "line N", or "its name" for a value in the path.
func (f Finding) Where() string {
	if f.Line == 0 {
		return "its name"
	}
	return fmt.Sprintf("line %d", f.Line)
}

// String names the finding by rule, file and line (and what allowed it), for a note, an error
// or a log line.
func (f Finding) String() string {
	s := fmt.Sprintf("%s in %q %s", f.Rule, f.File, f.Where())
	if f.Allowed != Refuses {
		s += " (" + f.AllowedBy() + ")"
	}
	return s
}

// AllowedBy says in words why the finding does not refuse the patch: "" when it does.
func (f Finding) AllowedBy() string {
	switch f.Allowed {
	case Refuses:
		return ""
	case InBase:
		return "already in the base"
	case ByIgnore:
		return "allowed by " + IgnorePath + " of the base"
	case ByAllowList:
		return "allowed by " + AllowListPath + " of the base"
	case PlaceholderRule:
		return "placeholder value (gitleaks' rule " + f.Rule + ")"
	case PlaceholderDefault:
		return "placeholder value (gitleaks' default allow-list)"
	}
	return "allowed (" + string(f.Allowed) + ")"
}

// maxListed bounds the findings List names.
const maxListed = 20

// List names findings for a note or an error, "; "-separated, at most 20 and how many more.
func List(fs []Finding) string {
	var s []string
	for i, f := range fs {
		if i == maxListed {
			s = append(s, fmt.Sprintf("and %d more", len(fs)-i))
			break
		}
		s = append(s, f.String())
	}
	return strings.Join(s, "; ")
}

// Mode is what a finding does to the patch: FROGNANO_SECRETS.
type Mode string

const (
	// Block refuses a patch with a finding: it is not pushed and no pull request holds it.
	Block Mode = "block"
	// Warn publishes the patch and lists the findings.
	Warn Mode = "warn"
	// DefaultMode is FROGNANO_SECRETS's default.
	DefaultMode = Block
)

// ParseMode reads FROGNANO_SECRETS; "" is DefaultMode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return DefaultMode, nil
	case Block, Warn:
		return m, nil
	}
	return "", fmt.Errorf("FROGNANO_SECRETS is %q: want %q or %q", s, Block, Warn)
}
