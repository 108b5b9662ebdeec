package run

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/frognano/frognano/githubapp"
)

// Options are what a person may choose when they ask for a run, by a mention (`@APP base=main
// attempts=2 model=big fix the flaky test`) or through the API (the same names as JSON fields).
// The zero value of each field is "not asked": the repository's settings, then the operator's
// configuration, decide. Whether an option is allowed (a model the operator offers this
// repository, attempts within the ceiling) is checked by the worker, not here.
type Options struct {
	Base     string `json:"base,omitempty"`     // the branch the patch applies to and the pull request targets
	Attempts int    `json:"attempts,omitempty"` // agent attempts, 1..MaxAskedAttempts
	Model    string `json:"model,omitempty"`    // the operator's name of a model server
	// Refused is an option of a pull request's mention that cannot be used, which the server
	// could not answer (it does not know yet whether the requester may write): the worker
	// refuses the request with it once it does (runs.asked_refused). nil: none.
	Refused *OptionError `json:"-"`
}

// refusedColumn is o.Refused as runs.asked_refused stores it ("": none).
func (o Options) refusedColumn() string {
	if o.Refused == nil {
		return ""
	}
	return o.Refused.Name + "\n" + o.Refused.Reason
}

// refusedFrom reads runs.asked_refused back ("": none).
func refusedFrom(column string) *OptionError {
	if column == "" {
		return nil
	}
	name, reason, _ := strings.Cut(column, "\n")
	return &OptionError{Name: name, Reason: reason}
}

// reasonBaseOnPull is the reason of base= refused on a pull request (renderOptionRefused words it).
const reasonBaseOnPull = "cannot be asked on a pull request"

// ParsePullRequestOptions is ParseOptions for a mention on a pull request: the same options,
// but base= is refused, as a run on a pull request works on its branch, onto its own base. A
// refused option is returned in Options.Refused with the instructions, not as an error, so
// that the request still reaches the worker, which refuses it once it knows the requester may
// write (nobody else is answered about options).
func ParsePullRequestOptions(text string) (Options, string) {
	o, rest, err := ParseOptions(text)
	var oe *OptionError
	switch {
	case errors.As(err, &oe):
		return Options{Refused: oe}, strings.TrimSpace(text)
	case err != nil:
		return Options{Refused: &OptionError{Name: "?", Reason: err.Error()}}, strings.TrimSpace(text)
	case o.Base != "":
		return Options{Refused: &OptionError{Name: OptionBase, Reason: reasonBaseOnPull}}, rest
	}
	return o, rest
}

// MaxAskedAttempts bounds the attempts anyone may ask for, whatever the operator allows.
const MaxAskedAttempts = 20

// Option names, as a mention writes them (`name=value`) and the API's JSON fields.
const (
	OptionBase     = "base"
	OptionAttempts = "attempts"
	OptionModel    = "model"
)

// OptionError is an option that cannot be used: unknown, repeated or with a bad value. Its
// message names the option and says what is wrong, for the reply that says nothing started.
type OptionError struct {
	Name   string // the option as written
	Reason string
}

func (e *OptionError) Error() string { return fmt.Sprintf("option %q: %s", e.Name, e.Reason) }

var (
	// optionWord is a word that asks for an option: `name=value`, the name in lower case.
	optionWord = regexp.MustCompile(`^([a-z][a-z0-9_-]{0,31})=(\S*)$`)
	// modelName is an operator's name for a model server (config: FROGNANO_MODEL_NAME,
	// FROGNANO_MODELS_FILE).
	modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// ParseOptions splits a request (a mention's text after the mention) into its options and the
// instructions that follow them. Options are the leading words of the form `name=value`, up to
// the first word that is not one; a lone `--` ends them too (and is dropped), so instructions
// may start with such a word. A leading word of that form whose name is not an option is an
// error (an *OptionError), never instructions: a typo such as `atempts=3` must not start a run
// with the defaults.
func ParseOptions(text string) (Options, string, error) {
	var o Options
	seen := map[string]bool{}
	rest := text
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		word := rest
		if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
			word = rest[:i]
		}
		if word == "--" {
			rest = rest[len(word):]
			break
		}
		m := optionWord.FindStringSubmatch(word)
		if m == nil {
			break
		}
		name, value := m[1], m[2]
		if seen[name] {
			return Options{}, "", &OptionError{Name: name, Reason: "is given twice"}
		}
		seen[name] = true
		if err := o.set(name, value); err != nil {
			return Options{}, "", err
		}
		rest = rest[len(word):]
	}
	return o, strings.TrimSpace(rest), nil
}

// set sets option name to value, checking its form.
func (o *Options) set(name, value string) error {
	bad := func(reason string) error { return &OptionError{Name: name, Reason: reason} }
	if value == "" {
		return bad("has no value")
	}
	switch name {
	case OptionBase:
		if err := CheckBranchName(value); err != nil {
			return bad(err.Error())
		}
		o.Base = value
	case OptionAttempts:
		n, err := strconv.Atoi(value)
		if err != nil || value[0] < '0' || value[0] > '9' || n < 1 || n > MaxAskedAttempts {
			return bad(fmt.Sprintf("must be a whole number from 1 to %d", MaxAskedAttempts))
		}
		o.Attempts = n
	case OptionModel:
		if !modelName.MatchString(value) {
			return bad("is not a model name (letters, digits, '.', '_' and '-', at most 64)")
		}
		o.Model = value
	default:
		return bad(fmt.Sprintf("is not an option; the options are %s, %s and %s", OptionBase, OptionAttempts, OptionModel))
	}
	return nil
}

// Check checks options that did not come through ParseOptions (the API's JSON) as
// ParseOptions would have.
func (o Options) Check() error {
	if o.Base != "" {
		if err := CheckBranchName(o.Base); err != nil {
			return &OptionError{Name: OptionBase, Reason: err.Error()}
		}
	}
	if o.Attempts != 0 && (o.Attempts < 1 || o.Attempts > MaxAskedAttempts) {
		return &OptionError{Name: OptionAttempts, Reason: fmt.Sprintf("must be a whole number from 1 to %d", MaxAskedAttempts)}
	}
	if o.Model != "" && !modelName.MatchString(o.Model) {
		return &OptionError{Name: OptionModel, Reason: "is not a model name (letters, digits, '.', '_' and '-', at most 64)"}
	}
	return nil
}

// IsZero reports whether nothing was asked.
func (o Options) IsZero() bool { return o == Options{} }

// CheckBranchName checks a branch name someone asked for: 1 to 255 characters that
// githubapp.ValidBranch accepts (what publishing accepts, nothing git could read as an option or
// a revision expression), and not one of frognano's own branches (IsOwnBranch).
func CheckBranchName(name string) error {
	if name == "" || len(name) > 255 || !githubapp.ValidBranch(name) || strings.HasPrefix(name, ".") || strings.Contains(name, "/.") {
		return errors.New("is not a valid branch name")
	}
	if IsOwnBranch(name) {
		return errors.New(reasonOwnBranch)
	}
	return nil
}

// reasonOwnBranch is why a base that is frognano's own branch is refused, at trigger and by
// the worker (noteBaseOurs).
const reasonOwnBranch = "is frognano's own branch, which a patch wrote: no run is based on it (ask on its pull request for a follow-up instead)"

// ValidModelName reports whether name may name a model server: the operator's names obey the
// same rule as the option that asks for one.
func ValidModelName(name string) bool { return modelName.MatchString(name) }
