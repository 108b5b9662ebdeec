package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/githubapp"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestAttemptsConfig(t *testing.T) {
	t.Parallel()
	cfg, err := Runner(envMap(map[string]string{
		"FROGNANO_ATTEMPTS": "4", "FROGNANO_MAX_ATTEMPTS": "6", "FROGNANO_ATTEMPTS_STOP_EARLY": "true",
		"FROGNANO_MODEL_CONCURRENCY": "3", "FROGNANO_MAX_SANDBOXES": "2",
	}))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Attempts
	if a.N != 4 || a.Max != 6 || !a.StopEarly || a.ModelLimiter == nil {
		t.Errorf("attempts = %+v", a)
	}
	if got := cfg.Sandbox.Slots.Cap(); got != 2 {
		t.Errorf("sandbox slots = %d, want FROGNANO_MAX_SANDBOXES=2", got)
	}
	def, err := Runner(envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	if def.Attempts.N != 1 || def.Attempts.Max != 8 || def.Attempts.StopEarly || def.Attempts.ModelLimiter == nil {
		t.Errorf("default attempts = %+v", def.Attempts)
	}
	if want := DefaultMaxSandboxes(sandbox.HostMemory(), def.Sandbox.Memory); def.Sandbox.Slots.Cap() != want || want < 1 {
		t.Errorf("default sandbox slots = %d, want %d (host memory / sandbox memory, less one)", def.Sandbox.Slots.Cap(), want)
	}
	if _, err := Runner(envMap(map[string]string{"FROGNANO_ATTEMPTS": "9"})); err == nil || !strings.Contains(err.Error(), "at most 8 (FROGNANO_MAX_ATTEMPTS)") {
		t.Errorf("9 attempts over the default cap: err = %v", err)
	}
	for _, tt := range []struct {
		host, sandbox int64
		want          int
	}{{16 << 30, 4 << 30, 3}, {4 << 30, 4 << 30, 1}, {0, 4 << 30, 0}, {64 << 30, 1 << 30, 63}} {
		if got := DefaultMaxSandboxes(tt.host, tt.sandbox); got != tt.want {
			t.Errorf("DefaultMaxSandboxes(%d, %d) = %d, want %d", tt.host, tt.sandbox, got, tt.want)
		}
	}
}

// TestOSVDirSetting: FROGNANO_OSV_DIR names an existing directory by an absolute path; unset,
// no vulnerability data is configured; anything else stops the start with a line naming it.
func TestOSVDirSetting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"": "", dir: dir, dir + "/": dir} {
		cfg, err := Runner(envMap(map[string]string{"FROGNANO_OSV_DIR": in}))
		if err != nil || cfg.OSVDir != want {
			t.Errorf("FROGNANO_OSV_DIR=%q: %q, %v; want %q", in, cfg.OSVDir, err, want)
		}
	}
	for _, in := range []string{"relative/osv", file, filepath.Join(dir, "missing")} {
		if _, err := Runner(envMap(map[string]string{"FROGNANO_OSV_DIR": in})); err == nil || !strings.Contains(err.Error(), "FROGNANO_OSV_DIR") {
			t.Errorf("FROGNANO_OSV_DIR=%q: err = %v, want a refusal naming the setting", in, err)
		}
	}
}

// TestScannerSettings: FROGNANO_SCANNERS (with its options), FROGNANO_SCANNER_TIMEOUT and
// FROGNANO_SCANNER_FAIL_LEVEL reach the runner's configuration; a bad value stops the start
// with an error that names the setting and the entry, never an entry's command.
func TestScannerSettings(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := Runner(env(map[string]string{
		"FROGNANO_SCANNERS":           "semgrep=semgrep scan --config /opt/rules --sarif -o {sarif} .;;ruff=ruff check --output-format sarif -o \"$FROGNANO_SARIF\" .",
		"FROGNANO_SCANNER_TIMEOUT":    "90s",
		"FROGNANO_SCANNER_FAIL_LEVEL": "warning",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Scanners) != 2 || cfg.Scanners[0].Name != "semgrep" || cfg.Scanners[1].Command != `ruff check --output-format sarif -o "$FROGNANO_SARIF" .` ||
		cfg.ScannerTimeout != 90*time.Second || cfg.ScannerFailLevel != scanner.FailWarning {
		t.Errorf("config = %+v, %s, %s", cfg.Scanners, cfg.ScannerTimeout, cfg.ScannerFailLevel)
	}
	// The options: a configuration pattern, a known tool, whether it runs the repository's code.
	cfg, err = Runner(env(map[string]string{"FROGNANO_SCANNERS": "lint[config=tools/eslint/** code=runs]=npx eslint -o {sarif} .;;w[tool=semgrep]=/opt/wrap"}))
	if err != nil {
		t.Fatal(err)
	}
	if l, w := cfg.Scanners[0], cfg.Scanners[1]; l.Code.Code != scanner.CodeRuns || len(l.Tools) != 1 || l.Tools[0] != "eslint" ||
		len(w.Tools) != 1 || w.Code.Code != scanner.CodeNone {
		t.Errorf("scanners = %+v", cfg.Scanners)
	}
	_, err = Runner(env(map[string]string{
		"FROGNANO_SCANNERS":           "ok=true;;Bad Name=tool --token hunter2secret;;x[config=../up]=tool --token hunter2secret",
		"FROGNANO_SCANNER_FAIL_LEVEL": "fatal",
	}))
	if err == nil {
		t.Fatal("bad scanner settings were accepted")
	}
	for _, want := range []string{"FROGNANO_SCANNERS: entry 2 is not NAME=COMMAND", `entry 3 (x) has a bad config pattern "../up"`, `FROGNANO_SCANNER_FAIL_LEVEL is "fatal"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "hunter2secret") {
		t.Errorf("the error quotes a command: %v", err)
	}
}

// TestSecretsSetting: FROGNANO_SECRETS picks what a secret found in a patch does; unset it
// blocks, and a value that is neither block nor warn stops the start with a line naming it.
func TestSecretsSetting(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]secrets.Mode{"": secrets.Block, "block": secrets.Block, "warn": secrets.Warn} {
		cfg, err := Runner(envMap(map[string]string{"FROGNANO_SECRETS": in}))
		if err != nil || cfg.Secrets != want {
			t.Errorf("FROGNANO_SECRETS=%q: %q, %v; want %q", in, cfg.Secrets, err, want)
		}
	}
	if _, err := Runner(envMap(map[string]string{"FROGNANO_SECRETS": "off"})); err == nil || !strings.Contains(err.Error(), "FROGNANO_SECRETS") {
		t.Errorf("FROGNANO_SECRETS=off: err = %v, want a refusal naming the setting", err)
	}
}

// TestSetupEnvSecretsRule: reading the configuration hands the operator's setup values to the
// one redactor (whole, and a proxy URL's password alone) and the runner the rule that refuses
// a patch holding one; values under 8 bytes are settings, not secrets; a URL password under 8
// bytes stops the start with a line that names the variable and never the password.
func TestSetupEnvSecretsRule(t *testing.T) {
	t.Parallel()
	const proxy = "http://mirror-user:cfgtest-pass-0042@proxy.invalid:3128"
	cfg, err := Runner(envMap(map[string]string{
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

	_, err = Runner(envMap(map[string]string{
		"FROGNANO_SETUP_ENV": "HTTPS_PROXY",
		"HTTPS_PROXY":        "http://mirror-user:tiny42@proxy.invalid:3128",
	}))
	if err == nil || !strings.Contains(err.Error(), "FROGNANO_SETUP_ENV: the password in HTTPS_PROXY's URL is shorter than 8 bytes") ||
		strings.Contains(err.Error(), "tiny42") {
		t.Errorf("err = %v, want a refusal naming HTTPS_PROXY without its password", err)
	}
}

func TestSetupConfig(t *testing.T) {
	t.Parallel()
	cfg, err := Runner(envMap(map[string]string{
		"FROGNANO_SETUP_NETWORK":  "build-net",
		"FROGNANO_SETUP_TIMEOUT":  "20m",
		"FROGNANO_ENV_CACHE_SIZE": "50g",
		"FROGNANO_SETUP_ENV":      "HTTPS_PROXY NO_PROXY PIP_INDEX_URL=http://mirror.internal/simple/",
		"HTTPS_PROXY":             "http://proxy:3128",
		"NO_PROXY":                "localhost,127.0.0.1",
		"FROGNANO_MODEL_API_KEY":  "never passed",
		"FROGNANO_SANDBOX_IMAGES": "acme/api=frognano-sandbox-go:1.26,acme/*=frognano-sandbox-node:22",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Env.Network != "build-net" || cfg.Env.Timeout != 20*time.Minute || cfg.Env.CacheSize != 50<<30 {
		t.Errorf("env config %+v", cfg.Env)
	}
	if want := []string{"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=localhost,127.0.0.1", "PIP_INDEX_URL=http://mirror.internal/simple/"}; !slices.Equal(cfg.Env.Env, want) {
		t.Errorf("setup env %q, want %q", cfg.Env.Env, want)
	}
	if got := cfg.Images.For("acme/web", cfg.Sandbox.Image); got != "frognano-sandbox-node:22" {
		t.Errorf("acme/web gets %q", got)
	}

	def, err := Runner(envMap(nil))
	if err != nil || def.Env.Network != envpkg.DefaultNetwork || def.Env.Timeout != envpkg.DefaultTimeout || def.Env.CacheSize != envpkg.DefaultCacheSize || len(def.Env.Env) != 0 || len(def.Images) != 0 {
		t.Errorf("defaults %+v, %v", def.Env, err)
	}

	_, err = Runner(envMap(map[string]string{
		"FROGNANO_SETUP_ENV":      "HTTPS_PROXY 1BAD FROGNANO_MODEL_API_KEY",
		"FROGNANO_SETUP_NETWORK":  "host",
		"FROGNANO_SANDBOX_IMAGES": "acme=img",
	}))
	for _, want := range []string{"names HTTPS_PROXY, which is not set", `"1BAD"`, `"FROGNANO_MODEL_API_KEY"`, "FROGNANO_SANDBOX_IMAGES", "FROGNANO_SETUP_NETWORK"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
}
