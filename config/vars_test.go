package config

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDeclarations: each variable is declared once, with a name frognano's documents use, a
// line of documentation, and a default that is words or a value its own parser reads as
// exactly its typed default.
func TestDeclarations(t *testing.T) {
	t.Parallel()
	nameRE := regexp.MustCompile("^((FROGNANO|GITHUB)_[A-Z0-9_]+|DATABASE_URL)$")
	seen := map[string]bool{}
	vars := Vars()
	if len(vars) < 60 {
		t.Fatalf("%d variables declared; frognano reads more", len(vars))
	}
	values := 0
	for _, v := range vars {
		if seen[v.Name] {
			t.Errorf("%s is declared twice", v.Name)
		}
		seen[v.Name] = true
		if !nameRE.MatchString(v.Name) {
			t.Errorf("%q is not a name of frognano's settings", v.Name)
		}
		if v.Doc == "" || strings.Contains(v.Doc, "\n") || strings.HasSuffix(v.Doc, ".") {
			t.Errorf("%s: its doc line is %q; want one line, no final period", v.Name, v.Doc)
		}
		if d, ok := Lookup(v.Name); !ok || d.Name != v.Name {
			t.Errorf("Lookup(%s) = %v, %v", v.Name, d, ok)
		}
		if !isValue(v.Default) {
			if err := v.IsDefault("x"); err == nil {
				t.Errorf("%s: a default in words (%q) is taken for a value", v.Name, v.Default)
			}
			continue
		}
		values++
		if err := v.IsDefault(strings.Trim(v.Default, "`")); err != nil {
			t.Errorf("%s: the declared default %s is not what the code uses: %v", v.Name, v.Default, err)
		}
	}
	if values < 30 {
		t.Errorf("only %d declared defaults are values", values)
	}
	if _, ok := Lookup("FROGNANO_NOT_A_SETTING"); ok {
		t.Error("Lookup found an undeclared name")
	}
}

// TestIsDefaultTellsValuesApart: IsDefault reads a value with the variable's own parser.
func TestIsDefaultTellsValuesApart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, value string
		ok          bool
	}{
		{"FROGNANO_RUN_TIMEOUT", "45m", true}, {"FROGNANO_RUN_TIMEOUT", "2700s", true}, {"FROGNANO_RUN_TIMEOUT", "46m", false},
		{"FROGNANO_RUN_TIMEOUT", "soon", false}, {"FROGNANO_SANDBOX_MEMORY", "4GiB", true}, {"FROGNANO_SANDBOX_MEMORY", "4m", false},
		{"FROGNANO_LABEL", "frognano", true}, {"FROGNANO_LABEL", "frog", false}, {"FROGNANO_SECRETS", "warn", false},
		{"GITHUB_URL", "https://github.com", true}, {"GITHUB_URL", "https://ghe.example.com", false},
	} {
		v, _ := Lookup(tt.name)
		if err := v.IsDefault(tt.value); (err == nil) != tt.ok {
			t.Errorf("%s=%s: IsDefault = %v, want ok %v", tt.name, tt.value, err, tt.ok)
		}
	}
}

// serviceEnv is a valid environment of `frognano serve`.
func serviceEnv(t *testing.T) map[string]string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"DATABASE_URL":           "postgres://frognano@127.0.0.1:1/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET":  "config-test-secret-5e0c1f9a",
		"GITHUB_APP_ID":          "424242",
		"GITHUB_APP_PRIVATE_KEY": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
	}
}

// TestLoadServiceReadsTheDeclaredList: `frognano serve` reads every declared variable, and no
// name it reads is undeclared: the list is the configuration.
func TestLoadServiceReadsTheDeclaredList(t *testing.T) {
	t.Parallel()
	env := serviceEnv(t)
	read := map[string]bool{}
	if _, err := LoadService(func(k string) string { read[k] = true; return env[k] }, true); err != nil {
		t.Fatal(err)
	}
	// The API client's settings are `frognano runs start`'s, not the service's: APIClient
	// reads them, and nothing else.
	clientRead := map[string]bool{}
	if _, _, err := APIClient(func(k string) string { clientRead[k] = true; return "" }); err == nil {
		t.Error("APIClient without its settings: no error")
	}
	if want := map[string]bool{apiURL.Name: true, apiToken.Name: true}; !maps.Equal(clientRead, want) {
		t.Errorf("APIClient reads %v, want %v", clientRead, want)
	}
	var unread, undeclared []string
	for _, v := range Vars() {
		if !read[v.Name] && !clientRead[v.Name] {
			unread = append(unread, v.Name)
		}
	}
	for name := range read {
		if _, ok := Lookup(name); !ok {
			undeclared = append(undeclared, name)
		}
	}
	sort.Strings(unread)
	sort.Strings(undeclared)
	if len(unread) > 0 {
		t.Errorf("declared but never read by LoadService: %v", unread)
	}
	if len(undeclared) > 0 {
		t.Errorf("read by LoadService but not declared: %v", undeclared)
	}
}

// TestSecretsAreNeverQuoted: a secret set to a value the start refuses (too short, not a URL,
// or beside a conflicting setting) is named, never quoted, in the one error of the start.
func TestSecretsAreNeverQuoted(t *testing.T) {
	t.Parallel()
	env := serviceEnv(t)
	values := map[string]string{}
	for _, v := range Vars() {
		if !v.Secret || v.Name == "GITHUB_APP_PRIVATE_KEY" {
			continue
		}
		values[v.Name] = "q" + randomText(t)
		env[v.Name] = values[v.Name]
	}
	for _, name := range []string{"DATABASE_URL", "GITHUB_WEBHOOK_SECRET", "FROGNANO_ADMIN_TOKEN", "FROGNANO_WEB_TOKEN", "GITHUB_APP_CLIENT_SECRET", "FROGNANO_SESSION_KEY", "FROGNANO_MODEL_API_KEY"} {
		if values[name] == "" {
			t.Errorf("%s is not declared a secret", name)
		}
	}
	env["FROGNANO_PUBLIC_URL"] = "https://frognano.example.com"
	_, err := LoadService(envMap(env), true)
	if err == nil {
		t.Fatal("the start accepted short secrets and two sign-ins")
	}
	for name, v := range values {
		if strings.Contains(err.Error(), v) {
			t.Errorf("the error quotes %s: %v", name, err)
		}
	}
	for _, want := range []string{"DATABASE_URL is not a valid PostgreSQL connection string", "FROGNANO_ADMIN_TOKEN must be at least", "run pages: both GITHUB_APP_CLIENT_ID and FROGNANO_WEB_TOKEN are set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
