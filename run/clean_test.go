package run

import (
	"encoding/json"
	"testing"
)

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
