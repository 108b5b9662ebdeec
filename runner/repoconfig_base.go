package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/frognano/frognano/internal/hostgit"
)

// settingsPaths are the paths a run's settings are read from: the repository's own files
// (LoadRepoConfig) and what verify.Detect looks at to pick a test command.
var settingsPaths = []string{
	".frognano", AgentsFile,
	"go.mod", "pytest.ini", "conftest.py", "pyproject.toml", "setup.cfg", "tox.ini",
	"package.json", "Cargo.toml", "Makefile", "makefile", "GNUmakefile",
	"tests", "test",
}

const (
	// maxSettingsListBytes bounds the listing of the settings paths a view reads.
	maxSettingsListBytes = 64 << 20
	// maxSettingsEntries bounds how many tree entries a settings view holds.
	maxSettingsEntries = 20000
	// maxSettingsFileBytes is the most of one settings file a view copies: more than any
	// reader takes (they refuse or stop before it).
	maxSettingsFileBytes = 4 << 20
)

// settingsView writes the settings paths of commit (in the checkout dir) into a new folder,
// as they are in that commit's tree: regular files with their content (test folders' files
// empty: only their names count), symlinks as dangling links (every reader refuses or
// ignores them), and returns the folder and a function that removes it. A follow-up run's
// checkout is its pull request's branch, which holds what an earlier model wrote; its test
// command, instructions and test detection come from the base commit, as its setup does,
// through this view.
func settingsView(ctx context.Context, dir, commit string) (string, func(), error) {
	out, err := gitLimited(ctx, dir, maxSettingsListBytes, append([]string{"ls-tree", "-r", "-z", "--full-tree", commit, "--"}, settingsPaths...)...)
	if err != nil {
		return "", nil, fmt.Errorf("listing the settings of %s: %w", commit, err)
	}
	view, err := os.MkdirTemp("", "frognano-settings-")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.RemoveAll(view) }
	entries := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	if len(entries) > maxSettingsEntries {
		entries = entries[:maxSettingsEntries]
	}
	for _, e := range entries {
		if len(e) == 0 {
			continue
		}
		if err := writeSettingsEntry(ctx, dir, view, string(e)); err != nil {
			done()
			return "", nil, fmt.Errorf("reading the settings of %s: %w", commit, err)
		}
	}
	return view, done, nil
}

// writeSettingsEntry writes one `git ls-tree` entry ("MODE TYPE OID\tPATH") below view.
func writeSettingsEntry(ctx context.Context, dir, view, entry string) error {
	meta, path, ok := strings.Cut(entry, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 3 || !filepath.IsLocal(path) {
		return fmt.Errorf("unexpected tree entry %q", entry)
	}
	mode, oid := f[0], f[2]
	if top, _, _ := strings.Cut(path, "/"); (top == "tests" || top == "test") && strings.Count(path, "/") > 2 {
		return nil // Detect looks two levels into a test folder at most
	}
	dst := filepath.Join(view, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	switch mode {
	case "120000":
		return os.Symlink("/nonexistent/frognano-symlink", dst)
	case "160000":
		return os.Mkdir(dst, 0o700)
	case "100644", "100755":
	default:
		return fmt.Errorf("unexpected mode %s of %s", mode, path)
	}
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if top, _, _ := strings.Cut(path, "/"); top == "tests" || top == "test" {
		return w.Close()
	}
	cmd := hostgit.Command(ctx, dir, "cat-file", "blob", oid)
	r, err := cmd.StdoutPipe()
	if err != nil {
		w.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	_, copyErr := io.Copy(w, io.LimitReader(bufio.NewReader(r), maxSettingsFileBytes))
	io.Copy(io.Discard, r) // let git finish a larger blob
	waitErr := cmd.Wait()
	return errors.Join(copyErr, waitErr, w.Close())
}

// gitLimited runs git in dir under the rule of every host git (internal/hostgit), with
// pathspecs read literally, and returns its output, or an error when it is over limit bytes
// (git is stopped then, not read to its end).
func gitLimited(ctx context.Context, dir string, limit int64, args ...string) ([]byte, error) {
	return hostgit.RunLimited(ctx, dir, limit, append([]string{"--literal-pathspecs"}, args...)...)
}
