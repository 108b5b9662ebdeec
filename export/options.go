package export

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/secretform"
)

// The formats of the records file.
const (
	// FormatLeaf is one Leaf trajectory document per line (docs/leaf-protocol.md, section 9),
	// its fields in the reference's order.
	FormatLeaf = "leaf"
	// FormatChat is one chat-completions fine-tuning record per line: {"messages","tools"}
	// and nothing else.
	FormatChat = "chat-jsonl"
)

// The outcomes a run's pull request may be filtered on.
const (
	OutcomeAny    = "any"    // every run, with a pull request or not
	OutcomeMerged = "merged" // the run's pull request was merged
	OutcomeClosed = "closed" // the run's pull request was closed without merge
)

// LabelsSuffix is what the labels file's name adds to the records file's.
const LabelsSuffix = ".labels.jsonl"

// Repo is a repository the operator names, as OWNER/NAME.
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// repoName is GitHub's spelling of an owner and of a repository's name.
var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ParseRepo reads OWNER/NAME.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || !repoName.MatchString(owner) || !repoName.MatchString(name) {
		return Repo{}, fmt.Errorf("%q is not OWNER/REPO", s)
	}
	return Repo{owner, name}, nil
}

// ParseSince reads --since: a UTC date (YYYY-MM-DD), an RFC 3339 time, or a duration before
// now (Go's, such as 72h, or a number of days, such as 30d).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a date (YYYY-MM-DD) nor a duration (72h, 30d)", s)
}

// Options says what to export and where.
type Options struct {
	// Repos are the repositories whose runs are exported; at least one. A name is the
	// repository's latest name in frognano's runs, matched without regard to case; its runs
	// under earlier names (a rename) come with it, and a repository that took over a name
	// frognano knew under another id only when the name is now its.
	Repos []Repo
	// Since keeps the runs created at or after it; zero: all.
	Since time.Time
	// Outcome is OutcomeAny (""), OutcomeMerged or OutcomeClosed.
	Outcome string
	// Format is FormatLeaf or FormatChat.
	Format string
	// Out is the records file; the labels are at Out+LabelsSuffix.
	Out string
	// Secrets are the operator's values (FROGNANO_SETUP_ENV's and the other settings that
	// must stay secret), looked for in every form secretform knows.
	Secrets []secretform.Secret
	// Progress, when set, is called after each record with what is done so far.
	Progress func(Progress)
	// BatchSize is how many runs one query reads; 0: 100.
	BatchSize int
}

// Progress is where an export stands.
type Progress struct {
	Done, Total int   // runs gone through and runs to go through (this invocation)
	Bytes       int64 // bytes written to both files (this invocation)
}

func (o Options) check() error {
	if len(o.Repos) == 0 {
		return fmt.Errorf("no repository named: only the runs of the repositories given are exported")
	}
	switch o.Format {
	case FormatLeaf, FormatChat:
	default:
		return fmt.Errorf("format %q: use %s or %s", o.Format, FormatLeaf, FormatChat)
	}
	switch o.Outcome {
	case "", OutcomeAny, OutcomeMerged, OutcomeClosed:
	default:
		return fmt.Errorf("outcome %q: use merged, closed or any", o.Outcome)
	}
	if o.Out == "" {
		return fmt.Errorf("no file to write")
	}
	return nil
}
