package queue

import (
	"encoding/json"
	"strings"
	"testing"
)

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
