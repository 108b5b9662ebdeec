package githubapp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/secrettest"
)

const (
	classicToken = "ghs_16C7e42F292c6912E7710c838347Ae178B4a" // GitHub's documented example, 40 chars
	longToken    = "ghs_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyz_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	RegisterSecret("canary-7f3a9c1e")
	RegisterSecret("short") // too short to register: would mangle ordinary text
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + classicToken))
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing secret here", "nothing secret here"},
		{classicToken, Redacted},
		{"token=" + classicToken + ".", "token=" + Redacted + "."},
		{"a " + longToken + " b", "a " + Redacted + " b"},
		{"two: " + classicToken + "," + classicToken, "two: " + Redacted + "," + Redacted},
		{"pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "pat " + Redacted},
		{"Authorization: Basic " + basic, "Authorization: Basic " + Redacted},
		{"ghs_tooShort is not a token", "ghs_tooShort is not a token"},
		{"ghp_" + strings.Repeat("a", 36), Redacted},
		{"env CANARY=canary-7f3a9c1e!", "env CANARY=" + Redacted + "!"},
		{"a short word", "a short word"},
		{"https://x-access-token:" + classicToken + "@github.com/o/r.git", "https://" + Redacted + "@github.com/o/r.git"},
		{"clone https://user:hunter2hunter2@ghe.example/o/r failed", "clone https://" + Redacted + "@ghe.example/o/r failed"},
		{"PostgreSQL at postgres://frognano:s3cret@db:5432/frognano", "PostgreSQL at postgres://" + Redacted + "@db:5432/frognano"},
		{"postgres://frognano:p@ss@db/frognano", "postgres://" + Redacted + "@db/frognano"},
		{"https://ghe.example/o/r and a@b:c", "https://ghe.example/o/r and a@b:c"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("prefix ", classicToken, " suffix")
	f.Add("", longToken, "")
	f.Add("ghs_", "ghs_"+strings.Repeat("Z", 36), "ghs_")
	f.Add("é\x00", classicToken, "\n")
	f.Fuzz(func(t *testing.T, before, tokenish, after string) {
		out := Redact(before + tokenish + after)
		for _, p := range tokenPatterns {
			if p.MatchString(out) {
				t.Errorf("Redact left a token in %q", out)
			}
			if p.FindString(tokenish) == tokenish && tokenish != "" && strings.Contains(out, tokenish) {
				t.Errorf("Redact kept %q", tokenish)
			}
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	line := strings.Repeat("ordinary log text with no secret in it ", 50) + classicToken
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		Redact(line)
	}
}

// TestRedactLogsErrorsPassGitleaksRules: an error logged through RedactLogs may quote what the
// sandbox printed, so its text passes gitleaks' rules (RedactRun), not only GitHub's forms.
func TestRedactLogsErrorsPassGitleaksRules(t *testing.T) {
	t.Parallel()
	key := secrettest.AWSKey(t)
	var buf bytes.Buffer
	log := slog.New(RedactLogs(slog.NewTextHandler(&buf, nil)))
	log.Error("tests failed", "error", errors.New("output: aws_access_key_id="+key))
	if strings.Contains(buf.String(), key) || !strings.Contains(buf.String(), "[secret: aws-access-token]") {
		t.Errorf("the log line: %s", buf.String())
	}
}
