// Package fault owns frognano's one rule for failures: whether a step that failed is worth
// trying again later (transient: the network, a 5xx, a database restart, a model server that is
// down) or would fail the same way however often it is tried (permanent: a 404, a patch that
// does not apply, a broken setup).
//
// The package that knows a dependency marks that dependency's failures where they arise, with
// Transient or Permanent (githubapp marks GitHub's answers, runner marks Docker and the model
// server); IsTransient reads the marks and applies the same fallback for every unmarked error.
// Every retry decision (the queue worker's, githubapp's own retries, the webhook server's 503)
// goes through IsTransient. Nothing decides by matching an error's text.
//
// The marks follow River's JobCancel and JobSnooze: constructors that wrap an error, and
// exported types for errors.As.
//
// fault must never import another frognano package: all of them import it.
package fault

import (
	"context"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// TransientError marks a failure that a later attempt may not hit. It is returned by Transient;
// use errors.As to find it.
type TransientError struct{ err error }

func (e *TransientError) Error() string   { return e.err.Error() }
func (e *TransientError) Unwrap() error   { return e.err }
func (e *TransientError) transient() bool { return true }

// PermanentError marks a failure that retrying the same input cannot fix. It is returned by
// Permanent; use errors.As to find it.
type PermanentError struct{ err error }

func (e *PermanentError) Error() string   { return e.err.Error() }
func (e *PermanentError) Unwrap() error   { return e.err }
func (e *PermanentError) transient() bool { return false }

// Transient marks err as worth retrying. The message is err's own. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{err}
}

// Permanent marks err as not worth retrying. The message is err's own. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{err}
}

type mark interface{ transient() bool }

// IsTransient reports whether err is worth retrying. The rule, in order:
//
//  1. nil is not.
//  2. The outermost mark in err's chain (Transient or Permanent, in errors.As order) decides: the
//     code closest to the decision knows best, so Permanent(Transient(x)) is permanent.
//  3. An unmarked context.Canceled is not: the caller gave up, nothing failed. (The worker
//     looks at its own context before it asks; a cancelled job is never retried as transient.)
//  4. An unmarked context.DeadlineExceeded is: one call's own time limit ran out, a slow
//     dependency rather than a bad request.
//  5. A network error (net.Error) is.
//  6. A PostgreSQL error is when its class says the server or the connection failed, not the
//     statement: 08 (connection), 40 (serialization failure, deadlock), 53 (insufficient
//     resources), 57P (admin shutdown, cannot connect now); or when pgx says the statement
//     never reached the server (pgconn.SafeToRetry).
//  7. Anything else is not.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var m mark
	if errors.As(err, &m) {
		return m.transient()
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		c := pgErr.Code
		return len(c) >= 2 && (c[:2] == "08" || c[:2] == "40" || c[:2] == "53" || (len(c) >= 3 && c[:3] == "57P"))
	}
	return pgconn.SafeToRetry(err)
}
