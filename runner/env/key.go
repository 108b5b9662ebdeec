package env

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/frognano/frognano/runner/patch"
)

// Files of the repository that env reads.
const (
	ScriptFile = ".frognano/setup.sh"     // the setup script, from the base commit
	InputsFile = ".frognano/setup-inputs" // the files the script reads, one path per line

	maxScriptBytes    = 256 << 10
	maxInputsBytes    = 16 << 10
	maxInputPaths     = 256
	maxInputFileBytes = 256 << 20 // one input file: a lockfile is a few MiB at most
	maxInputTotal     = 1 << 30   // all inputs together
	// keyVersion changes when what a key covers changes, so that images made under the old
	// rule are not reused.
	keyVersion = "frognano-env/1"
)

// DefaultInputs are the files at the repository root that a setup script usually reads (the
// manifests and lockfiles of the common package managers). They make the key when the
// repository has no .frognano/setup-inputs; those present are hashed.
var DefaultInputs = []string{
	"requirements*.txt", "pyproject.toml", "poetry.lock", "uv.lock", "Pipfile.lock", "setup.cfg",
	"go.mod", "go.sum",
	"package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml",
	"Cargo.toml", "Cargo.lock",
	"Gemfile.lock",
}

// ScriptAt returns the bytes of .frognano/setup.sh in commit of the host checkout dir, or nil
// when the commit has none. It reads git's object store, never the working tree, with no git
// configuration but the repository's own. A script that is a symlink, a submodule, larger than 256 KiB or
// not text is an error: nothing of it runs.
func ScriptAt(ctx context.Context, dir, commit string) ([]byte, error) {
	return blobAt(ctx, dir, commit, ScriptFile, maxScriptBytes)
}

// blobAt reads the regular file rel of commit from git's objects.
func blobAt(ctx context.Context, dir, commit, rel string, max int) ([]byte, error) {
	out, err := gitOut(ctx, dir, "ls-tree", "-z", commit, "--", rel)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %.12s: %w", rel, commit, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	// "<mode> <type> <object>\t<path>\0"
	meta, _, _ := strings.Cut(string(out), "\t")
	f := strings.Fields(meta)
	if len(f) != 3 {
		return nil, fmt.Errorf("reading %s at %.12s: unexpected git ls-tree output %q", rel, commit, out)
	}
	if f[0] != "100644" && f[0] != "100755" {
		return nil, fmt.Errorf("%s at %.12s is not a regular file (git mode %s)", rel, commit, f[0])
	}
	size, err := gitOut(ctx, dir, "cat-file", "-s", f[2])
	if err != nil {
		return nil, fmt.Errorf("reading %s at %.12s: %w", rel, commit, err)
	}
	if n := strings.TrimSpace(string(size)); len(n) > 9 || atoi(n) > max {
		return nil, fmt.Errorf("%s is %s bytes, over the %d-byte limit", rel, n, max)
	}
	b, err := gitOut(ctx, dir, "cat-file", "blob", f[2])
	if err != nil {
		return nil, fmt.Errorf("reading %s at %.12s: %w", rel, commit, err)
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return nil, fmt.Errorf("%s is not text", rel)
	}
	return b, nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// gitOut runs git on the host checkout dir the way every host-side git of the runner runs
// (patch.HostGit: no system, global or user configuration, no hooks, no fsmonitor, no prompt).
func gitOut(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return patch.HostGit(dir)(ctx, nil, nil, args...)
}

// ParseInputs reads .frognano/setup-inputs: one path per line, relative to the repository root
// and slash-separated; blank lines and lines starting with # are skipped; a path may hold the
// wildcards of path.Match in its last element, and may name a directory (every regular file
// under it counts). Absolute paths, ".." and ".git" components, and more than 256 lines are
// refused.
func ParseInputs(b []byte) ([]string, error) {
	if len(b) > maxInputsBytes {
		return nil, fmt.Errorf("%s is over the %d-byte limit", InputsFile, maxInputsBytes)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%s is not UTF-8 text", InputsFile)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := checkInputPath(line); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", InputsFile, i+1, err)
		}
		out = append(out, strings.TrimSuffix(line, "/"))
		if len(out) > maxInputPaths {
			return nil, fmt.Errorf("%s lists more than %d paths", InputsFile, maxInputPaths)
		}
	}
	return out, nil
}

func checkInputPath(p string) error {
	if strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\x00\\") {
		return fmt.Errorf("%q must be a relative, slash-separated path", p)
	}
	parts := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for i, c := range parts {
		switch {
		case c == "" || c == "." || c == "..":
			return fmt.Errorf("%q has an empty, . or .. component", p)
		case strings.EqualFold(c, ".git"):
			return fmt.Errorf("%q reaches into .git", p)
		case i < len(parts)-1 && strings.ContainsAny(c, "*?["):
			return fmt.Errorf("%q has a wildcard before its last element", p)
		}
	}
	if _, err := path.Match(parts[len(parts)-1], ""); err != nil {
		return fmt.Errorf("%q: %v", p, err)
	}
	return nil
}

// Input is one file that goes into the key.
type Input struct {
	Path   string // slash-separated, relative to the repository root
	SHA256 string // hex
	Size   int64
}

// ReadInputs hashes the inputs of the setup script in the working tree of dir: the paths
// .frognano/setup-inputs lists in commit (read from git's objects, like the script), or else
// those of DefaultInputs present at the root. Only regular files count, never through a
// symlink: the key says what setup can see, and setup sees a copy of the checkout.
func ReadInputs(ctx context.Context, dir, commit string) ([]Input, error) {
	patterns := DefaultInputs
	listed, err := blobAt(ctx, dir, commit, InputsFile, maxInputsBytes)
	if err != nil {
		return nil, err
	}
	if listed != nil {
		if patterns, err = ParseInputs(listed); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the checkout: %w", err)
	}
	defer root.Close()
	seen := map[string]bool{}
	var files []string
	for _, p := range patterns {
		matches, err := expand(root, p)
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	sort.Strings(files)
	var total int64
	out := make([]Input, 0, len(files))
	for _, f := range files {
		in, err := hashFile(root, f)
		if err != nil {
			return nil, err
		}
		if total += in.Size; total > maxInputTotal {
			return nil, fmt.Errorf("the setup inputs hold more than %d MiB", maxInputTotal>>20)
		}
		out = append(out, in)
	}
	return out, nil
}

// expand returns the regular files a pattern names: itself, the matches of its last element in
// its directory, or every regular file under a directory it names, never through a symlink.
func expand(root *os.Root, pattern string) ([]string, error) {
	dir, last := path.Split(pattern)
	dir = strings.TrimSuffix(dir, "/")
	if !realDir(root, dir) {
		return nil, nil
	}
	var names []string
	if strings.ContainsAny(last, "*?[") {
		entries, err := fs.ReadDir(root.FS(), orDot(dir))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", orDot(dir), err)
		}
		for _, e := range entries {
			if ok, _ := path.Match(last, e.Name()); ok {
				names = append(names, path.Join(dir, e.Name()))
			}
		}
	} else {
		names = []string{pattern}
	}
	var out []string
	for _, n := range names {
		info, err := root.Lstat(n)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", n, err)
		case info.Mode().IsRegular():
			out = append(out, n)
		case info.IsDir():
			err := fs.WalkDir(root.FS(), n, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.Name() == ".git" && d.IsDir() {
					return fs.SkipDir
				}
				if d.Type().IsRegular() {
					out = append(out, p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", n, err)
			}
		}
	}
	return out, nil
}

// realDir says whether dir (slash-separated, "" for the root) is a directory reached through
// directories only.
func realDir(root *os.Root, dir string) bool {
	if dir == "" {
		return true
	}
	p := ""
	for _, c := range strings.Split(dir, "/") {
		p = path.Join(p, c)
		info, err := root.Lstat(p)
		if err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

func hashFile(root *os.Root, rel string) (Input, error) {
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return Input{}, fmt.Errorf("reading %s: %w", rel, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxInputFileBytes+1))
	if err != nil {
		return Input{}, fmt.Errorf("reading %s: %w", rel, err)
	}
	if n > maxInputFileBytes {
		return Input{}, fmt.Errorf("setup input %s is over the %d MiB limit", rel, maxInputFileBytes>>20)
	}
	return Input{Path: rel, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// Key is the environment's content hash: the base image's ID, the script's bytes and each
// input's path and content. Equal keys mean setup would run the same script on the same
// inputs over the same image, so its result can be reused.
func Key(baseImageID string, script []byte, inputs []Input) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nbase %s\nscript %d\n", keyVersion, baseImageID, len(script))
	h.Write(script)
	fmt.Fprintf(h, "\ninputs %d\n", len(inputs))
	for _, in := range inputs {
		fmt.Fprintf(h, "%d:%s %s\n", len(in.Path), in.Path, in.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}
