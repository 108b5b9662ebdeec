package githubapp

// The errors that hold GitHub's refusals (a token, a push, a deleted branch), and how long a rate
// limit asks to wait. Explain, in text_refusals.go, words them for a person.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// RateLimitWait reports how long GitHub asked to wait when err is a rate limit frognano did not
// wait out (longer than Config.MaxRateLimitWait): the worker ends a run whose budget it outlasts.
func RateLimitWait(err error, now time.Time) (time.Duration, bool) {
	var abuse *github.AbuseRateLimitError
	var primary *github.RateLimitError
	switch {
	case errors.As(err, &abuse):
		return abuse.GetRetryAfter(), true
	case errors.As(err, &primary):
		return max(primary.Rate.Reset.Sub(now), 0), true
	}
	return 0, false
}

// TokenRefusedError: GitHub refused to issue an installation token (POST
// /app/installations/{id}/access_tokens), or refused the App's own JWT, with this answer.
type TokenRefusedError struct {
	Installation int64
	Status       int
	Message      string // GitHub's message
	DocURL       string // GitHub's documentation_url
	err          error  // ghinstallation's error, for the status and errors.As
}

func (e *TokenRefusedError) Error() string {
	return fmt.Sprintf("%v: %d %s", e.err, e.Status, e.Message)
}

func (e *TokenRefusedError) Unwrap() error { return e.err }

// tokenRefusal reads GitHub's answer to a refused token request (ghinstallation leaves its body
// unread) into a TokenRefusedError; other errors are returned as they are.
func tokenRefusal(installation int64, err error) error {
	var he *ghinstallation.HTTPError
	if !errors.As(err, &he) || he.Response == nil || he.Response.StatusCode < 400 {
		return err
	}
	e := &TokenRefusedError{Installation: installation, Status: he.Response.StatusCode, err: err}
	if he.Response.Body != nil {
		var body struct {
			Message          string `json:"message"`
			DocumentationURL string `json:"documentation_url"`
		}
		// The body is GitHub's basic-error JSON; a body that is not still leaves the status.
		_ = decodeLimited(he.Response.Body, &body)
		e.Message, e.DocURL = body.Message, body.DocumentationURL
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
	}
	return e
}

// PushRefusedError: GitHub refused to move frognano's branch to its commit (the Git database
// API's reference update) for a rule of the repository (a ruleset, a branch protection rule,
// required signatures): trying again is refused the same way until someone changes the
// setting, so it is permanent. An archived or disabled repository refuses every write, which
// Explain words from GitHub's answer itself.
type PushRefusedError struct {
	Branch string
	Kind   string   // one of the PushRefused* constants
	Lines  []string // GitHub's message, line by line
	err    error
}

// What GitHub refuses a branch update for.
const (
	PushRefusedRuleset       = "ruleset"        // "Repository rule violations found": a repository ruleset
	PushRefusedProtection    = "protection"     // "Protected branch update failed": a branch protection rule
	PushRefusedSignedCommits = "signed_commits" // "Commits must have verified signatures", by either
)

func (e *PushRefusedError) Error() string {
	return fmt.Sprintf("GitHub refused the update of branch %s (%s): %v", e.Branch, e.Kind, e.err)
}

func (e *PushRefusedError) Unwrap() error { return e.err }

// BranchGoneError: a branch frognano was to clone (a follow-up's pull request branch) is not on
// GitHub: someone deleted it.
type BranchGoneError struct {
	Branch string
	err    error
}

func (e *BranchGoneError) Error() string {
	return fmt.Sprintf("branch %s is gone: %v", e.Branch, e.err)
}
func (e *BranchGoneError) Unwrap() error { return e.err }

// decodeLimited decodes at most maxErrorBody bytes of JSON from r and closes it.
func decodeLimited(r io.ReadCloser, v any) error {
	defer r.Close()
	return json.NewDecoder(io.LimitReader(r, maxErrorBody)).Decode(v)
}
