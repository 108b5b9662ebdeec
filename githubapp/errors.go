package githubapp

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// transientError marks a failure of infrastructure that a later attempt may not hit (a git
// transfer that broke, a 5xx that outlived the retries).
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// permanentError marks a failure that retrying the same input cannot fix (a patch that does not
// apply to the base commit).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// IsTransient reports whether err is an infrastructure failure worth retrying the whole job for:
// GitHub 5xx, 429, network errors and timeouts, rate limits that could not be waited out, and git
// transfers that failed. It is false for answers that will not change (401, 403 without a rate
// limit, 404, 422, a patch that does not apply) and for nil.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var perm *permanentError
	if errors.As(err, &perm) {
		return false
	}
	var tr *transientError
	if errors.As(err, &tr) {
		return true
	}
	var rateErr *github.RateLimitError
	var abuseErr *github.AbuseRateLimitError
	if errors.As(err, &rateErr) || errors.As(err, &abuseErr) {
		return true
	}
	var respErr *github.ErrorResponse
	if errors.As(err, &respErr) && respErr.Response != nil {
		return transientStatus(respErr.Response.StatusCode)
	}
	var tokenErr *ghinstallation.HTTPError
	if errors.As(err, &tokenErr) {
		if tokenErr.Response == nil {
			return true // the token request never got an answer
		}
		return transientStatus(tokenErr.Response.StatusCode)
	}
	// A cancelled or timed-out context means the work was cut short on our side, not refused.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

func transientStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
}

// statusCode returns the HTTP status of a go-github error, or 0.
func statusCode(err error) int {
	var respErr *github.ErrorResponse
	if errors.As(err, &respErr) && respErr.Response != nil {
		return respErr.Response.StatusCode
	}
	return 0
}
