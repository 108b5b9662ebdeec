package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
)

// TestSettingsViewOfHostileTrees: the base commit's tree can hold what no checkout
// would write: a `tests` that is a symlink out of the repository, a `.frognano` that is a file
// or a gitlink, test paths with tabs and newlines (ls-tree -z splits on NUL, and on the first
// tab of each entry). The view holds each as what it is, nothing is read or written outside
// it, and no test command or instructions come of it.
func TestSettingsViewOfHostileTrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git := gittest.In(t, dir)
	write := func(rel, content string) { t.Helper(); gittest.Write(t, dir, map[string]string{rel: content}) }
	git("init", "-q", "-b", "main")
	write(".frognano", "test-command: true\n")
	if err := os.Symlink("/etc", filepath.Join(dir, "tests")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "a file .frognano and a tests link")
	first := git("rev-parse", "HEAD")

	git("rm", "-q", "--cached", ".frognano", "tests")
	os.Remove(filepath.Join(dir, ".frognano"))
	os.Remove(filepath.Join(dir, "tests"))
	write("test/a\tb.py", "")
	write("test/c\nd.py", "")
	write("test/x\t100644 blob "+strings.Repeat("0", 40)+"\t.frognano/test-command", "")
	git("add", "-A")
	git("update-index", "--add", "--cacheinfo", "160000,"+first+",.frognano")
	git("commit", "-q", "-m", "a gitlink .frognano and odd test names")
	second := git("rev-parse", "HEAD")

	for _, tc := range []struct {
		commit string
		check  func(t *testing.T, view string)
	}{
		{first, func(t *testing.T, view string) {
			if target, err := os.Readlink(filepath.Join(view, "tests")); err != nil || strings.HasPrefix(target, "/etc") {
				t.Errorf("tests in the view: link to %q, %v; want a dangling placeholder", target, err)
			}
			if fi, err := os.Lstat(filepath.Join(view, ".frognano")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf(".frognano in the view: %v, %v; want the file it is", fi, err)
			}
		}},
		{second, func(t *testing.T, view string) {
			for _, name := range []string{"test/a\tb.py", "test/c\nd.py"} {
				if _, err := os.Lstat(filepath.Join(view, name)); err != nil {
					t.Errorf("%q is missing from the view: %v", name, err)
				}
			}
			entries, err := os.ReadDir(filepath.Join(view, ".frognano"))
			if err != nil || len(entries) != 0 {
				t.Errorf(".frognano (a gitlink) in the view: %v, %v; want an empty folder", entries, err)
			}
		}},
	} {
		view, done, err := settingsView(context.Background(), dir, tc.commit)
		if err != nil {
			t.Fatalf("settingsView(%s): %v", tc.commit, err)
		}
		tc.check(t, view)
		cfg, _ := LoadRepoConfig(view)
		if cfg.TestCommand != "" || cfg.Instructions != "" {
			t.Errorf("settings from a hostile tree: test command %q, instructions %q", cfg.TestCommand, cfg.Instructions)
		}
		done()
		if _, err := os.Stat(view); !os.IsNotExist(err) {
			t.Errorf("the view %s was not removed: %v", view, err)
		}
	}
}
