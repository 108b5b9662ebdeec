package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestIsTransient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"Plain", errors.New("404 Not Found"), false},
		{"Method", fmt.Errorf("pushing: %w", flaky{"push"}), true},
		{"Sentinel", fmt.Errorf("github 502: %w", ErrTransient), true},
		{"PermanentWinsOverInner", permanent(flaky{"x"}), false},
		{"Deadline", fmt.Errorf("calling API: %w", context.DeadlineExceeded), true},
		{"Network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"PGConnection", &pgconn.PgError{Code: "08006"}, true},
		{"PGSerialization", &pgconn.PgError{Code: "40001"}, true},
		{"PGAdminShutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"PGUniqueViolation", &pgconn.PgError{Code: "23505"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	classic := "ghs_" + strings.Repeat("a", 36)
	long := "ghs_" + strings.Repeat("B", 60) + "_x"
	tests := []struct{ in, want string }{
		{"clone https://x-access-token:" + classic + "@github.com/o/r failed", "clone https://[REDACTED]@github.com/o/r failed"},
		{"token " + classic + " expired", "token [REDACTED] expired"},
		{"token " + long, "token [REDACTED]"},
		{"pat github_pat_" + strings.Repeat("9", 40), "pat [REDACTED]"},
		{"nothing secret here: ghs_short", "nothing secret here: ghs_short"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"Untouched", `{"a":"b"}`, `{"a":"b"}`},
		{"NULEscape", `{"a":"x\u0000y"}`, `{"a":"x\ufffdy"}`},
		{"EscapedBackslashIsNotNUL", `{"a":"\\u0000"}`, `{"a":"\\u0000"}`},
		{"Invalid", `{"a":`, ``},
		{"Empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(cleanJSON([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("cleanJSON(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("cleanJSON produced invalid JSON %s", got)
			}
		})
	}
}
