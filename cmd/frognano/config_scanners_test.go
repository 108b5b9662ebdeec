package main

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/scanner"
)

// TestScannerSettings: FROGNANO_SCANNERS (with its options), FROGNANO_SCANNER_TIMEOUT and
// FROGNANO_SCANNER_FAIL_LEVEL reach the runner's configuration; a bad value stops the start
// with an error that names the setting and the entry, never an entry's command.
func TestScannerSettings(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := runnerConfig(env(map[string]string{
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
	cfg, err = runnerConfig(env(map[string]string{"FROGNANO_SCANNERS": "lint[config=tools/eslint/** code=runs]=npx eslint -o {sarif} .;;w[tool=semgrep]=/opt/wrap"}))
	if err != nil {
		t.Fatal(err)
	}
	if l, w := cfg.Scanners[0], cfg.Scanners[1]; l.Code.Code != scanner.CodeRuns || len(l.Tools) != 1 || l.Tools[0] != "eslint" ||
		len(w.Tools) != 1 || w.Code.Code != scanner.CodeNone {
		t.Errorf("scanners = %+v", cfg.Scanners)
	}
	_, err = runnerConfig(env(map[string]string{
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
