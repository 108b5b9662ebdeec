package server

import (
	"errors"
	"net/http"

	"github.com/frognano/frognano/internal/fault"
)

// Errors the webhook handler returns; statusOf maps them to HTTP statuses.
var (
	ErrUnauthorized = errors.New("invalid or missing webhook signature")
	ErrBadRequest   = errors.New("malformed webhook delivery")
	ErrTooLarge     = errors.New("webhook body too large")
)

// statusOf is the ONE place errors become HTTP statuses. A failure worth retrying
// (fault.IsTransient: the database restarting, a lost connection) is a 503;
// anything else it does not recognise is a 500, so GitHub (or an operator) can
// redeliver.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case fault.IsTransient(err):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// publicMessage is what a client is told: never internal details.
func publicMessage(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return ErrUnauthorized.Error()
	case http.StatusBadRequest:
		return ErrBadRequest.Error()
	case http.StatusRequestEntityTooLarge:
		return ErrTooLarge.Error()
	case http.StatusServiceUnavailable:
		return "service temporarily unavailable"
	default:
		return "internal error; the delivery was not accepted, redeliver it"
	}
}
