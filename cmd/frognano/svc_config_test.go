package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// TestServeRefusesBadConfiguration: `frognano serve` with a broken environment stops before
// touching PostgreSQL or Docker, with a usage error (exit 2) on one line that names the
// setting, and never repeats a secret's value.
func TestServeRefusesBadConfiguration(t *testing.T) {
	t.Parallel()
	const secret = "wh-secret-9c2f61d0e4b7a3"
	key := string(githubtest.New(t).PrivateKey)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))

	valid := map[string]string{
		// Port 1 on the loopback: if the command ever got as far as connecting, it would fail
		// with a setup error (exit 3), not the usage error asserted here.
		"DATABASE_URL":           "postgres://frognano@127.0.0.1:1/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET":  secret,
		"GITHUB_APP_ID":          "424242",
		"GITHUB_APP_PRIVATE_KEY": key,
		"GITHUB_URL":             "https://ghe.example.com",
		"FROGNANO_MODEL_URL":     "http://127.0.0.1:8000/v1",
	}
	for _, tc := range []struct {
		name string
		set  map[string]string
		want string // in the one line
	}{
		{"NoSecret", map[string]string{"GITHUB_WEBHOOK_SECRET": ""}, "GITHUB_WEBHOOK_SECRET is not set"},
		{"KeyNotPEM", map[string]string{"GITHUB_APP_PRIVATE_KEY": "this is not a key"}, "validating GitHub App config"},
		{"KeyNotRSA", map[string]string{"GITHUB_APP_PRIVATE_KEY": ecPEM}, "validating GitHub App config"},
		{"KeyTruncated", map[string]string{"GITHUB_APP_PRIVATE_KEY": key[:len(key)/2]}, "validating GitHub App config"},
		{"URLNotHTTPS", map[string]string{"GITHUB_URL": "ftp://ghe.example.com"}, "validating GitHub App config"},
		{"URLWithPath", map[string]string{"GITHUB_URL": "https://ghe.example.com/api/v3"}, "validating GitHub App config"},
		{"URLPlainHTTPRemote", map[string]string{"GITHUB_URL": "http://ghe.example.com"}, "validating GitHub App config"},
		{"AppIDNotANumber", map[string]string{"GITHUB_APP_ID": "frognano"}, "GITHUB_APP_ID"},
		{"WorkersNotANumber", map[string]string{"FROGNANO_WORKERS": "two"}, `FROGNANO_WORKERS="two" is not a non-negative integer`},
		{"WorkersNegative", map[string]string{"FROGNANO_WORKERS": "-1"}, `FROGNANO_WORKERS="-1"`},
		{"JobTimeoutNotADuration", map[string]string{"FROGNANO_JOB_TIMEOUT": "soon"}, `FROGNANO_JOB_TIMEOUT="soon" is not a duration`},
		{"MemoryNotASize", map[string]string{"FROGNANO_SANDBOX_MEMORY": "lots"}, `FROGNANO_SANDBOX_MEMORY="lots"`},
		{"LogLevel", map[string]string{"FROGNANO_LOG_LEVEL": "loud"}, `FROGNANO_LOG_LEVEL="loud"`},
		{"RetentionTooShort", map[string]string{"FROGNANO_DELIVERY_RETENTION": "-5h"}, `FROGNANO_DELIVERY_RETENTION="-5h"`},
		{"NoDatabase", map[string]string{"DATABASE_URL": ""}, "DATABASE_URL is not set"},
		{"NoModel", map[string]string{"FROGNANO_MODEL_URL": ""}, "no model server"},
		{"ModelNotHTTP", map[string]string{"FROGNANO_MODEL_URL": "gpu:8000"}, "is not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range valid {
				env[k] = v
			}
			for k, v := range tc.set {
				env[k] = v
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr)
			if err == nil {
				t.Fatal("serve accepted the configuration")
			}
			// What main prints: "frognano: " + the error, and the exit status.
			line := "frognano: " + err.Error()
			t.Log(line)
			if code := exitCode(err); code != 2 {
				t.Errorf("exit status %d, want 2 (usage); error: %s", code, line)
			}
			if strings.Contains(line, "\n") {
				t.Errorf("the error spans several lines:\n%s", line)
			}
			if !strings.Contains(line, tc.want) {
				t.Errorf("error = %s\nwant it to contain %q", line, tc.want)
			}
			all := line + stdout.String() + stderr.String()
			for what, s := range map[string]string{"the webhook secret": secret, "the App key": svcKeyLine(t, key)} {
				if strings.Contains(all, s) {
					t.Errorf("the output repeats %s:\n%s", what, all)
				}
			}
			if strings.Contains(all, "PRIVATE KEY") {
				t.Errorf("the output quotes a key:\n%s", all)
			}
		})
	}
}
