package queue

import (
	"context"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrTransient marks an error worth retrying: wrap it (fmt.Errorf("...: %w",
// ErrTransient)) or implement `Transient() bool` on the error type.
var ErrTransient = errors.New("transient failure")

// IsTransient reports whether err is an infrastructure failure worth retrying:
// an error in its chain says so (a `Transient() bool` method or ErrTransient),
// a network error, or a PostgreSQL error that is safe to retry. Everything
// else is permanent: retrying would fail the same way.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	if errors.Is(err, ErrTransient) {
		return true
	}
	// A deadline hit by a single outbound call (not the job's own context,
	// which the worker checks first) is a slow dependency, not a bad request.
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 40: transaction rollback
		// (serialization failure, deadlock); 53: insufficient resources;
		// 57P: operator intervention (admin shutdown, cannot connect now).
		c := pgErr.Code
		return len(c) >= 2 && (c[:2] == "08" || c[:2] == "40" || c[:2] == "53" || (len(c) >= 3 && c[:3] == "57P"))
	}
	return pgconn.SafeToRetry(err)
}

// permanentError marks a failure that must not be retried.
type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() error   { return e.err }
func (e permanentError) Transient() bool { return false }

func permanent(err error) error { return permanentError{err} }
