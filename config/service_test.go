package config

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/web/auth"
)

// testKey is an RSA key in the encoding GitHub hands out (PKCS#1).
func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func randomText(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func TestGitHubApp(t *testing.T) {
	t.Parallel()
	pkcs1 := testKey(t)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, pkcs1, 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		appID, key, file, url = githubapp.EnvAppID, githubapp.EnvPrivateKey, githubapp.EnvPrivateKeyFile, githubapp.EnvURL
	)
	tests := []struct {
		name    string
		env     map[string]string
		wantErr bool
	}{
		{"KeyInline", map[string]string{appID: "12", key: string(pkcs1), url: "https://ghe.example.com"}, false},
		{"KeyFile", map[string]string{appID: "12", file: keyFile}, false},
		{"BothKeys", map[string]string{appID: "12", key: string(pkcs1), file: keyFile}, true},
		{"MissingKeyFile", map[string]string{appID: "12", file: keyFile + ".missing"}, true},
		{"AppIDNotNumber", map[string]string{appID: "twelve", key: string(pkcs1)}, true},
		{"NoAppID", map[string]string{key: string(pkcs1)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := GitHubApp(envMap(tt.env))
			if (err != nil) != tt.wantErr {
				t.Fatalf("GitHubApp() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (cfg.AppID != 12 || len(cfg.PrivateKey) == 0 || cfg.URL != tt.env[url]) {
				t.Errorf("GitHubApp() = AppID %d, key %d bytes, URL %q", cfg.AppID, len(cfg.PrivateKey), cfg.URL)
			}
		})
	}
}

// TestGitHubAppReportsEveryProblem: one start names every variable to fix, and never quotes
// the key.
func TestGitHubAppReportsEveryProblem(t *testing.T) {
	t.Parallel()
	env := map[string]string{githubapp.EnvAppID: "twelve", githubapp.EnvPrivateKey: string(testKey(t)), githubapp.EnvPrivateKeyFile: "/nonexistent/app.pem"}
	_, err := GitHubApp(envMap(env))
	if err == nil || !strings.Contains(err.Error(), githubapp.EnvAppID+`="twelve"`) || !strings.Contains(err.Error(), "both "+githubapp.EnvPrivateKey+" and "+githubapp.EnvPrivateKeyFile) {
		t.Fatalf("GitHubApp() error = %v, want both the app id and the two keys named", err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY-----") {
		t.Errorf("the error quotes the key: %v", err)
	}
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	const testToken = "correct-horse-battery-staple-42"
	key := strings.Repeat("s", auth.MinSessionKeyLength)
	const (
		publicURL, clientID, clientSecret, webToken, sessionKey = auth.EnvPublicURL, auth.EnvClientID, auth.EnvClientSecret, auth.EnvWebToken, auth.EnvSessionKey
	)
	tests := []struct {
		name string
		env  map[string]string
		err  string // "" means valid
	}{
		{"Nothing", map[string]string{publicURL: "https://f.example"}, "run pages need sign-in"},
		{"OAuth", map[string]string{publicURL: "https://f.example", clientID: "Iv1.x", clientSecret: "s"}, ""},
		{"OAuthGHES", map[string]string{publicURL: "https://f.example", clientID: "Iv1.x", clientSecret: "s", "GITHUB_URL": "https://ghe.example.com"}, ""},
		{"OAuthNoSecret", map[string]string{publicURL: "https://f.example", clientID: "Iv1.x"}, clientSecret},
		{"Both", map[string]string{publicURL: "https://f.example", clientID: "a", clientSecret: "b", webToken: testToken}, "set one"},
		{"Token", map[string]string{publicURL: "http://127.0.0.1:8080", webToken: testToken, sessionKey: key}, ""},
		{"ShortToken", map[string]string{publicURL: "https://f.example", webToken: "short"}, "at least 16"},
		{"ShortKey", map[string]string{publicURL: "https://f.example", webToken: testToken, sessionKey: "short"}, "at least 32"},
		{"NoPublicURL", map[string]string{webToken: testToken}, publicURL + " must be set"},
		{"PublicURLPath", map[string]string{publicURL: "https://f.example/frognano", webToken: testToken}, "no path"},
		{"PublicURLScheme", map[string]string{publicURL: "ftp://f.example", webToken: testToken}, "http or https"},
		{"PublicURLRelative", map[string]string{publicURL: "f.example", webToken: testToken}, "http or https"},
		{"GitHubURLHTTP", map[string]string{publicURL: "https://f.example", clientID: "a", clientSecret: "b", "GITHUB_URL": "http://ghe.example.com"}, "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := signIn(envMap(tt.env))
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one containing %q", err, tt.err)
			}
			if err != nil && tt.env[webToken] != "" && strings.Contains(err.Error(), tt.env[webToken]) {
				t.Errorf("the error shows the token")
			}
		})
	}
	if _, err := signIn(envMap(map[string]string{publicURL: "https://f.example"})); !errors.Is(err, auth.ErrNotConfigured) {
		t.Errorf("nothing configured: %v, want ErrNotConfigured", err)
	}
}

// TestReadWeb: the run pages are off without sign-in; FROGNANO_PUBLIC_URL is an http(s)
// origin; a sign-in configured wrongly stops the start, never quoting a secret.
func TestReadWeb(t *testing.T) {
	t.Parallel()
	const token = "a-shared-token-long-enough-for-the-rule-0123456789"
	tests := []struct {
		name    string
		env     map[string]string
		off     bool
		wantErr string
	}{
		{"NoSignIn", map[string]string{"FROGNANO_PUBLIC_URL": "https://frognano.example.com"}, true, ""},
		{"Nothing", map[string]string{}, true, ""},
		{"Token", map[string]string{"FROGNANO_PUBLIC_URL": "https://frognano.example.com/", "FROGNANO_WEB_TOKEN": token}, false, ""},
		{"TokenWithoutPublicURL", map[string]string{"FROGNANO_WEB_TOKEN": token}, false, "FROGNANO_PUBLIC_URL"},
		{"PublicURLNotHTTP", map[string]string{"FROGNANO_PUBLIC_URL": "ftp://frognano.example.com"}, false, "FROGNANO_PUBLIC_URL"},
		{"PublicURLWithCredentials", map[string]string{"FROGNANO_PUBLIC_URL": "https://u:p@frognano.example.com"}, false, "FROGNANO_PUBLIC_URL"},
		{"ShortToken", map[string]string{"FROGNANO_PUBLIC_URL": "https://frognano.example.com", "FROGNANO_WEB_TOKEN": "short"}, false, "FROGNANO_WEB_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := readWeb(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "short") || strings.Contains(err.Error(), ":p@") {
					t.Errorf("the error repeats a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (c.Off != "") != tt.off {
				t.Errorf("off = %q, want off %v", c.Off, tt.off)
			}
			if tt.name == "Token" && c.PublicURL != "https://frognano.example.com" {
				t.Errorf("public URL %q", c.PublicURL)
			}
		})
	}
}

// The service's own secrets are the one redactor's too: an error or a log line that quoted one
// shows [REDACTED] instead.
func TestServiceSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	webhook, admin, dbPassword := "webhook-secret-"+randomText(t), "admin-token-"+randomText(t), "db-password-"+randomText(t)
	env := map[string]string{
		"DATABASE_URL":          "postgres://frognano:" + dbPassword + "@127.0.0.1:5432/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET": webhook,
		"FROGNANO_ADMIN_TOKEN":  admin,
		"FROGNANO_METRICS_ADDR": "127.0.0.1:0",
	}
	LoadService(envMap(env), true) // errors (no App) do not matter here
	for _, s := range []string{webhook, admin, dbPassword} {
		if out := githubapp.Redact("the error said " + s); strings.Contains(out, s) {
			t.Errorf("%q is not redacted: %q", s, out)
		}
	}
}
