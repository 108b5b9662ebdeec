package fault_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/frognano/frognano/internal/fault"
)

func TestIsTransient(t *testing.T) {
	t.Parallel()
	cancelledRequest := &url.Error{Op: "Get", URL: "https://ghe.example/api/v3", Err: context.Canceled}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"Plain", errors.New("404 Not Found"), false},
		{"Transient", fmt.Errorf("pushing: %w", fault.Transient(errors.New("connection reset"))), true},
		{"Permanent", fault.Permanent(errors.New("patch does not apply")), false},
		{"OutermostMarkWins", fault.Permanent(fault.Transient(errors.New("x"))), false},
		{"OutermostTransientWins", fault.Transient(fmt.Errorf("y: %w", fault.Permanent(errors.New("x")))), true},
		{"MarkWinsOverDeadline", fault.Permanent(fmt.Errorf("git: %w", context.DeadlineExceeded)), false},
		{"MarkInJoin", errors.Join(errors.New("502"), fault.Transient(errors.New("bad gateway"))), true},
		{"Cancelled", fmt.Errorf("calling API: %w", context.Canceled), false},
		{"CancelledRequest", cancelledRequest, false},
		{"Deadline", fmt.Errorf("calling API: %w", context.DeadlineExceeded), true},
		{"Network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"PGConnection", &pgconn.PgError{Code: "08006"}, true},
		{"PGSerialization", &pgconn.PgError{Code: "40001"}, true},
		{"PGInsufficientResources", &pgconn.PgError{Code: "53300"}, true},
		{"PGAdminShutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"PGQueryCanceled", &pgconn.PgError{Code: "57014"}, false},
		{"PGUniqueViolation", &pgconn.PgError{Code: "23505"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := fault.IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestMarksKeepTheMessageAndTheChain(t *testing.T) {
	t.Parallel()
	inner := errors.New("connection reset")
	err := fault.Transient(inner)
	if err.Error() != inner.Error() || !errors.Is(err, inner) {
		t.Errorf("Transient(%v) = %q, Is inner %v", inner, err, errors.Is(err, inner))
	}
	var te *fault.TransientError
	if !errors.As(fmt.Errorf("cloning: %w", err), &te) {
		t.Error("errors.As does not find the TransientError")
	}
	if fault.Transient(nil) != nil || fault.Permanent(nil) != nil {
		t.Error("marking nil is not nil")
	}
}

func ExampleIsTransient() {
	err := fmt.Errorf("cloning octo/pager: %w", fault.Transient(errors.New("git: the remote end hung up")))
	fmt.Println(fault.IsTransient(err))
	fmt.Println(fault.IsTransient(fault.Permanent(err)))
	fmt.Println(fault.IsTransient(context.Canceled))
	// Output:
	// true
	// false
	// false
}
