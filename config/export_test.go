package config

import (
	"slices"
	"testing"

	"github.com/frognano/frognano/internal/secretform"
)

// TestExportSecrets: the values `frognano export` looks for are every secret setting that is
// set, each FROGNANO_SETUP_ENV value (NAME=value, or NAME read from the environment), and the
// password of each URL among them; short values and ordinary settings are not.
func TestExportSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"DATABASE_URL":           "postgres://frognano:db-password-123@db:5432/frognano",
		"GITHUB_WEBHOOK_SECRET":  "webhook-secret-4567",
		"FROGNANO_MODEL_API_KEY": "short",
		"FROGNANO_MODEL_URL":     "http://gpu:8000/v1",
		"FROGNANO_SETUP_ENV":     "MIRROR_TOKEN=mirror-token-89ab PIP_NO_CACHE_DIR=1 PROXY",
		"PROXY":                  "http://user:proxy-pass-cdef@proxy:3128",
	}
	got := ExportSecrets(func(k string) string { return env[k] })
	want := []secretform.Secret{
		{Name: "DATABASE_URL", Value: "postgres://frognano:db-password-123@db:5432/frognano"},
		{Name: "the password in DATABASE_URL", Value: "db-password-123"},
		{Name: "GITHUB_WEBHOOK_SECRET", Value: "webhook-secret-4567"},
		{Name: "MIRROR_TOKEN", Value: "mirror-token-89ab"},
		{Name: "PROXY", Value: "http://user:proxy-pass-cdef@proxy:3128"},
		{Name: "the password in PROXY", Value: "proxy-pass-cdef"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ExportSecrets = %+v\nwant %+v", got, want)
	}
}
