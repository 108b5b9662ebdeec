package githubapp

import (
	"errors"
	"net/http"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/fault"
)

// mark translates GitHub's answers into the one failure rule (package fault): a 5xx, 429 or 408,
// a rate limit that could not be waited out, or an installation-token request that failed with
// one of those is transient; any other HTTP answer (401, 403 without a rate limit, 404, 422) is
// permanent, since asking again gets the same answer. An error that is already marked, or that is
// not an answer from GitHub (a network error, a timeout, a cancelled context), is left to
// fault.IsTransient's own rule. Every exported method returns its errors through mark.
func mark(err error) error {
	if err == nil {
		return nil
	}
	var te *fault.TransientError
	var pe *fault.PermanentError
	if errors.As(err, &te) || errors.As(err, &pe) {
		return err
	}
	var rateErr *github.RateLimitError
	var abuseErr *github.AbuseRateLimitError
	if errors.As(err, &rateErr) || errors.As(err, &abuseErr) {
		return fault.Transient(err)
	}
	if code := statusCode(err); code != 0 {
		return byStatus(code, err)
	}
	var tokenErr *ghinstallation.HTTPError
	if errors.As(err, &tokenErr) && tokenErr.Response != nil {
		return byStatus(tokenErr.Response.StatusCode, err)
	}
	return err
}

func byStatus(code int, err error) error {
	if code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout {
		return fault.Transient(err)
	}
	return fault.Permanent(err)
}

// statusCode returns the HTTP status of a go-github error, or 0.
func statusCode(err error) int {
	var respErr *github.ErrorResponse
	if errors.As(err, &respErr) && respErr.Response != nil {
		return respErr.Response.StatusCode
	}
	return 0
}
