package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/verify"
)

// TestSettingsViewIsTheCommitsTree: the settings a follow-up reads come from the base commit's
// tree, whatever the checkout's branch changed since, under the same rules as a checkout's
// (a symlink is refused, not followed).
func TestSettingsViewIsTheCommitsTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte("HOST PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := gittest.In(t, dir)
	write := func(rel, content string) { t.Helper(); gittest.Write(t, dir, map[string]string{rel: content}) }
	run("init", "-q", "-b", "main")
	write(TestCommandFile, "pytest -q tests\n")
	write(InstructionsFile, "Base rules.\n")
	write("tests/test_a.py", "def test_a(): pass\n")
	write("tests/deep/er/test_b.py", "")
	write("pyproject.toml", "[project]\nname = \"x\"\n"+strings.Repeat("# pad\n", maxSettingsFileBytes/6+10))
	if err := os.Symlink(secret, filepath.Join(dir, AgentsFile)); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	base := run("rev-parse", "HEAD")

	// What an earlier model committed on the pull request's branch.
	write(TestCommandFile, "true\n")
	write(InstructionsFile, "EARLIER-MODEL: never touch tests/.\n")
	os.Remove(filepath.Join(dir, AgentsFile))
	write(AgentsFile, "EARLIER-MODEL agents\n")
	write("go.mod", "module x\n")
	run("rm", "-q", "-r", "tests")
	run("add", "-A")
	run("commit", "-q", "-m", "run 1")

	view, done, err := settingsView(context.Background(), dir, base)
	if err != nil {
		t.Fatal(err)
	}
	cfg, cfgErr := LoadRepoConfig(view)
	if cfg.TestCommand != "pytest -q tests" || cfg.Instructions != "Base rules." || cfg.Agents != "" {
		t.Errorf("settings of the base = %+v", cfg)
	}
	if cfgErr == nil || !strings.Contains(cfgErr.Error(), "symlink") {
		t.Errorf("the base's AGENTS.md symlink: error %v, want it refused", cfgErr)
	}
	if got := verify.Detect(view); got != verify.CmdPytest {
		t.Errorf("Detect(base) = %q, want pytest (tests/ with Python files)", got)
	}
	if got := verify.Detect(dir); got != verify.CmdGo {
		t.Errorf("Detect(branch) = %q: the test's branch is not what it should be", got)
	}
	if st, err := os.Stat(filepath.Join(view, "pyproject.toml")); err != nil || st.Size() != maxSettingsFileBytes {
		t.Errorf("pyproject.toml in the view: %v, %v; want cut at %d bytes", st, err, maxSettingsFileBytes)
	}
	if _, err := os.Lstat(filepath.Join(view, "tests", "deep", "er", "test_b.py")); err == nil {
		t.Error("the view holds a test file deeper than Detect looks")
	}
	done()
	if _, err := os.Stat(view); !os.IsNotExist(err) {
		t.Errorf("the view is left after done: %v", err)
	}
	if _, _, err := settingsView(context.Background(), dir, strings.Repeat("0", 40)); err == nil {
		t.Error("a missing commit gave a view")
	}
}
