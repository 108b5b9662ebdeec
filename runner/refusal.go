package runner

import (
	"errors"
	"fmt"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/env"
)

// Refusal is why one of frognano's checks refused what the run made: the agent's patch (the
// published-tree check for secret values, the tree's path rules, a secrets scan that could not
// be done) or, with Environment, what the repository's setup built (the seal check). A report
// shows it as a sentence and a list (package report's refusal.go), never as an error chain; the secrets
// check's own findings have their table (Result.SecretFindings) and are not repeated here.
type Refusal struct {
	// Environment: the seal check refused what setup built; else the agent's patch.
	Environment bool
	// Why is what was refused and why, one sentence of frognano's own words (markdown: code
	// spans of fixed names only), without the refused thing's name ("the patch was refused:"
	// comes before it).
	Why string
	// Items are the places the check named: a path (the patch's or setup's: untrusted, shown as
	// code), the variable of $FROGNANO_ENV setup set (untrusted), and what it holds or why it
	// is refused (frognano's words, with at most an operator's setting name).
	Items []RefusedItem
	// Detail is what the machinery said when the check could not be done (git's error, a
	// scan's limit): untrusted, one line, shown as code after Why.
	Detail string
	// Fix says what to do, in frognano's words ("" when there is nothing to say).
	Fix string
}

// RefusedItem is one place a check named.
type RefusedItem struct {
	Path, Name, What string
}

// PatchRefusal words the error that refused the agent's patch (checkPatch) as a Refusal: the
// check that refused it, why, and each path it named.
func PatchRefusal(err error) *Refusal {
	var (
		ve *patch.ValueError
		re *patch.RefusedError
		ae *patch.ApplyError
		se *audit.ScanError
		tl *patch.FileTooLargeError
	)
	r := &Refusal{}
	switch {
	case errors.As(err, &ve):
		r.Why = "it would publish a value frognano keeps secret (a token, or one of the operator's `FROGNANO_SETUP_ENV` values): " +
			"each file below holds one, read whole as it would be published, in the form named. Nothing of it was pushed or kept"
		for _, f := range ve.Files {
			r.Items = append(r.Items, RefusedItem{Path: f.Path, What: f.Reason})
		}
		return r
	case errors.As(err, &re):
		r.Why = "it writes paths that a patch must never write (into `.git`, outside the repository, through a symbolic link, a submodule), " +
			"which is never the by-product of an honest fix, so the whole patch was refused"
		for _, f := range re.Rejected {
			r.Items = append(r.Items, RefusedItem{Path: f.Path, What: f.Reason})
		}
		return r
	case errors.As(err, &ae):
		r.Why = "git could not apply it to the base commit on the host, so what it would publish could not be checked"
		r.Detail = ae.Err.Error()
		return r
	case errors.As(err, &se):
		r.Why = "it could not be scanned for secrets, and `FROGNANO_SECRETS=block` refuses a patch it cannot scan"
	case errors.As(err, &tl):
		r.Why = "its published files could not be read whole to check them for secret values, so it was not published unread"
	default:
		r.Why = "frognano could not check it on the host, so it was not published unchecked"
	}
	switch {
	case errors.As(err, &tl):
		r.Items = []RefusedItem{{Path: tl.Path, What: fmt.Sprintf("is %d bytes, over the 100 MB a file may have on GitHub", tl.Size)}}
	case se != nil:
		r.Detail = se.Err.Error()
	default:
		r.Detail = err.Error()
	}
	return r
}

// EnvironmentRefusal words the seal check's refusal of what setup built.
func EnvironmentRefusal(u *env.Unsealed) *Refusal {
	r := &Refusal{Environment: true}
	for _, f := range u.Found {
		r.Items = append(r.Items, RefusedItem{Path: f.Path, Name: f.Name, What: f.What})
	}
	if len(u.Found) > 0 {
		r.Why = "setup left a value the operator passes it (`FROGNANO_SETUP_ENV`) where the model would read it, " +
			"in the places below (in the form named). Nothing of the environment was kept, and the model was not called"
		r.Fix = env.SealFix
		return r
	}
	r.Why = "it could not be checked for the values the operator passes setup (`FROGNANO_SETUP_ENV`), and a check that cannot be done refuses. " +
		"Nothing of the environment was kept, and the model was not called"
	for _, p := range u.Problems {
		r.Items = append(r.Items, RefusedItem{Path: p.Path, What: "could not be checked: " + p.What})
	}
	r.Detail = u.Stopped
	return r
}
