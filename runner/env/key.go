package env

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner/sandbox"
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
	keyVersion = "frognano-env/2"
)

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
	Mode   string // git's mode: "100644", or "100755" for an executable
	SHA256 string // hex, of the content
	Size   int64
}

// Inputs is what setup sees of the repository besides its script, and what the key holds of
// it. Both come from the setup commit's tree in git's objects, never from a working tree.
type Inputs struct {
	// Listed is true when the commit has .frognano/setup-inputs: setup then sees only Files
	// (and the script), so the environment is reused across commits that keep them the same.
	// Otherwise setup sees the commit's whole tree and history, and the key holds Commit: the
	// environment is rebuilt for every new commit.
	Listed bool
	Commit string // the setup commit, resolved
	Files  []Input
}

// Paths returns the paths of the listed files, nil when nothing was listed (setup sees the
// whole commit).
func (in Inputs) Paths() []string {
	if !in.Listed {
		return nil
	}
	out := make([]string, 0, len(in.Files)+1)
	for _, f := range in.Files {
		out = append(out, f.Path)
	}
	return out
}

// ReadInputs reads what setup will see of commit of the host checkout dir, from git's objects
// alone: the regular files that .frognano/setup-inputs (in commit) lists, hashed, or, without
// that file, the commit itself. A listed path that commit lacks is left out; a symbolic link
// or submodule is never an input (setup does not get it).
func ReadInputs(ctx context.Context, dir, commit string) (Inputs, error) {
	resolved, err := gitOut(ctx, dir, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return Inputs{}, fmt.Errorf("resolving the setup commit %.12s: %w", commit, err)
	}
	in := Inputs{Commit: strings.TrimSpace(string(resolved))}
	listed, err := blobAt(ctx, dir, commit, InputsFile, maxInputsBytes)
	if err != nil || listed == nil {
		return in, err
	}
	patterns, err := ParseInputs(listed)
	if err != nil {
		return Inputs{}, err
	}
	in.Listed = true
	tree, err := sandbox.CommitTree(ctx, dir, in.Commit)
	if err != nil {
		return Inputs{}, err
	}
	var chosen []sandbox.TreeEntry
	var total int64
	for _, e := range tree {
		if !e.Regular() || !matchesAny(patterns, e.Path) {
			continue
		}
		if e.Size > maxInputFileBytes {
			return Inputs{}, fmt.Errorf("setup input %s is over the %d MiB limit", e.Path, maxInputFileBytes>>20)
		}
		if total += e.Size; total > maxInputTotal {
			return Inputs{}, fmt.Errorf("the setup inputs hold more than %d MiB", maxInputTotal>>20)
		}
		chosen = append(chosen, e)
	}
	in.Files = make([]Input, 0, len(chosen))
	err = sandbox.EachBlob(ctx, dir, chosen, func(e sandbox.TreeEntry, r io.Reader) error {
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return fmt.Errorf("reading setup input %s: %w", e.Path, err)
		}
		in.Files = append(in.Files, Input{Path: e.Path, Mode: e.Mode, SHA256: hex.EncodeToString(h.Sum(nil)), Size: e.Size})
		return nil
	})
	if err != nil {
		return Inputs{}, err
	}
	sort.Slice(in.Files, func(i, j int) bool { return in.Files[i].Path < in.Files[j].Path })
	return in, nil
}

// matchesAny says whether the file p is named by one of patterns: the path itself, a match of
// a pattern's last element in its folder, or a file anywhere under a folder a pattern names
// (or matches).
func matchesAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		n := strings.Count(pat, "/") + 1
		parts := strings.SplitN(p, "/", n+1)
		if len(parts) < n {
			continue
		}
		head := strings.Join(parts[:n], "/")
		if head == pat {
			return true
		}
		dir, last := path.Split(pat)
		hdir, hlast := path.Split(head)
		if dir == hdir && strings.ContainsAny(last, "*?[") {
			if ok, _ := path.Match(last, hlast); ok {
				return true
			}
		}
	}
	return false
}

// Scope names whose an environment is. An environment image is used only by runs of the same
// Scope.Repo, and counts against its Scope.Tenant's share of the cache.
type Scope struct {
	// Tenant is whose share of the cache the environment takes: the GitHub App installation
	// in the service ("github installation 42"); "local" for `frognano run`.
	Tenant string
	// Repo names the repository by what nobody else can take: in the service the installation
	// and the repository's immutable id (never its name, which a stranger may register after
	// a rename); in `frognano run` the checkout itself (LocalScope).
	Repo string
}

// ServiceScope is the Scope of a repository of a GitHub App installation.
func ServiceScope(installationID, repoID int64) Scope {
	return Scope{
		Tenant: fmt.Sprintf("github installation %d", installationID),
		Repo:   fmt.Sprintf("github installation %d repository %d", installationID, repoID),
	}
}

// LocalScope is the Scope of `frognano run`'s checkout dir: its real path and the identity
// (device and inode) of its git directory, so that another repository cloned to the same
// path later does not inherit its environments.
func LocalScope(dir string) (Scope, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return Scope{}, fmt.Errorf("resolving the checkout's path: %w", err)
	}
	info, err := os.Stat(filepath.Join(abs, ".git"))
	if err != nil {
		return Scope{}, fmt.Errorf("identifying the checkout: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return Scope{}, errors.New("identifying the checkout: no inode")
	}
	return Scope{Tenant: "local", Repo: fmt.Sprintf("local checkout %s (git directory %d:%d)", abs, st.Dev, st.Ino)}, nil
}

// Key is the environment's identity: the scope, the base image's ID, the script's bytes and
// what setup sees of the repository (each listed input's path, mode and content, or the
// commit). Equal keys mean setup would run the same script over the same bytes on the same
// image for the same repository, so its result can be reused.
func Key(scope Scope, baseImageID string, script []byte, in Inputs) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\ntenant %d:%s\nrepo %d:%s\nbase %s\nscript %d\n", keyVersion,
		len(scope.Tenant), scope.Tenant, len(scope.Repo), scope.Repo, baseImageID, len(script))
	h.Write(script)
	if !in.Listed {
		fmt.Fprintf(h, "\ncommit %s\n", in.Commit)
		return hex.EncodeToString(h.Sum(nil))
	}
	fmt.Fprintf(h, "\ninputs %d\n", len(in.Files))
	for _, f := range in.Files {
		fmt.Fprintf(h, "%d:%s %s %s\n", len(f.Path), f.Path, f.Mode, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}
