package config

import (
	"os"
	"path/filepath"
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

// TestExportSecretsReadsTheModelsFilesKeys: a model server's key given in FROGNANO_MODELS_FILE
// (through api_key_env or api_key_file) is the operator's value too, and the export looks for
// it, even when another entry of the file cannot be read where the export runs.
func TestExportSecretsReadsTheModelsFilesKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "large.key")
	if err := os.WriteFile(keyFile, []byte("file-model-key-7788\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	models := filepath.Join(dir, "models.yaml")
	text := "models:\n" +
		"  - {name: small, url: 'http://gpu-1:8000/v1', model: s, api_key_env: SMALL_MODEL_KEY}\n" +
		"  - {name: large, url: 'http://gpu-2:8000/v1', model: l, api_key_file: " + keyFile + "}\n" +
		"  - {name: other, url: 'http://gpu-3:8000/v1', model: o, api_key_env: NOT_SET_HERE}\n"
	if err := os.WriteFile(models, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FROGNANO_MODELS_FILE": models, "SMALL_MODEL_KEY": "env-model-key-5566"}
	got := ExportSecrets(func(k string) string { return env[k] })
	for _, want := range []string{"env-model-key-5566", "file-model-key-7788"} {
		if !slices.ContainsFunc(got, func(s secretform.Secret) bool { return s.Value == want }) {
			t.Errorf("ExportSecrets = %+v: no %q (a model's key from the models file)", got, want)
		}
	}
}
