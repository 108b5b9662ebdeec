package main

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
)

// TestSetupEnvSecretsRule: reading the configuration hands the operator's setup values to the
// one redactor (whole, and a proxy URL's password alone) and the runner the rule that refuses
// a patch holding one; values under 8 bytes are settings, not secrets; a URL password under 8
// bytes stops the start with a line that names the variable and never the password.
func TestSetupEnvSecretsRule(t *testing.T) {
	t.Parallel()
	const proxy = "http://mirror-user:cfgtest-pass-0042@proxy.invalid:3128"
	cfg, err := runnerConfig(envMap(map[string]string{
		"FROGNANO_SETUP_ENV": "MIRROR_TOKEN=cfgtest-token-0042 HTTPS_PROXY PIP_NO_CACHE_DIR=1",
		"HTTPS_PROXY":        proxy,
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"cfgtest-token-0042", proxy, "cfgtest-pass-0042"} {
		if got := githubapp.Redact("x " + v + " y"); got != "x "+githubapp.Redacted+" y" {
			t.Errorf("Redact kept %q: %q", v, got)
		}
	}
	if cfg.SecretValues == nil {
		t.Fatal("the runner does not refuse patches by the redactor's rule")
	}
	if _, ok := cfg.SecretValues().Find([]byte("token = cfgtest-token-0042\n")); !ok {
		t.Error("the runner's published-tree check does not know the setup value")
	}
	if _, ok := cfg.SecretValues().Find([]byte("no cache: 1\n")); ok {
		t.Error("the runner's published-tree check takes a short setting for a secret")
	}

	_, err = runnerConfig(envMap(map[string]string{
		"FROGNANO_SETUP_ENV": "HTTPS_PROXY",
		"HTTPS_PROXY":        "http://mirror-user:tiny42@proxy.invalid:3128",
	}))
	if err == nil || !strings.Contains(err.Error(), "FROGNANO_SETUP_ENV: the password in HTTPS_PROXY's URL is shorter than 8 bytes") ||
		strings.Contains(err.Error(), "tiny42") {
		t.Errorf("err = %v, want a refusal naming HTTPS_PROXY without its password", err)
	}
}

// The service's own secrets are the one redactor's too: an error or a log line that quoted one
// shows [REDACTED] instead.
func TestServiceSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	webhook, admin, dbPassword := "webhook-secret-"+svcRandom(t), "admin-token-"+svcRandom(t), "db-password-"+svcRandom(t)
	env := map[string]string{
		"DATABASE_URL":          "postgres://frognano:" + dbPassword + "@127.0.0.1:5432/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET": webhook,
		"FROGNANO_ADMIN_TOKEN":  admin,
		"FROGNANO_METRICS_ADDR": "127.0.0.1:0",
	}
	loadServiceConfig(func(k string) string { return env[k] }, true) // errors (no App) do not matter here
	for _, s := range []string{webhook, admin, dbPassword} {
		if out := githubapp.Redact("the error said " + s); strings.Contains(out, s) {
			t.Errorf("%q is not redacted: %q", s, out)
		}
	}
}
