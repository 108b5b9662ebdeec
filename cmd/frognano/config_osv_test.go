package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		cfg, err := runnerConfig(envMap(map[string]string{"FROGNANO_OSV_DIR": in}))
		if err != nil || cfg.OSVDir != want {
			t.Errorf("FROGNANO_OSV_DIR=%q: %q, %v; want %q", in, cfg.OSVDir, err, want)
		}
	}
	for _, in := range []string{"relative/osv", file, filepath.Join(dir, "missing")} {
		if _, err := runnerConfig(envMap(map[string]string{"FROGNANO_OSV_DIR": in})); err == nil || !strings.Contains(err.Error(), "FROGNANO_OSV_DIR") {
			t.Errorf("FROGNANO_OSV_DIR=%q: err = %v, want a refusal naming the setting", in, err)
		}
	}
}
