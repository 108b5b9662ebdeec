package deps

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/frognano/frognano/check/patch"
)

// side is one tree List reads, from git's objects only: the base commit or the patched tree.
type side struct {
	git   patch.Git
	env   []string
	rev   string // a tree-ish
	where string // "at the base commit", "in the patched tree"
	base  bool
	found map[string]treeEntry // what lookup answered
	// lookups counts the git processes lookup started (maxLookups).
	lookups int
}

func newSide(git patch.Git, env []string, rev, where string, base bool) *side {
	// Literal pathspecs: a path written in a manifest ("req*.txt", ":(glob)x") names one file.
	env = append(append([]string(nil), env...), "GIT_LITERAL_PATHSPECS=1")
	return &side{git: git, env: env, rev: rev, where: where, base: base, found: map[string]treeEntry{}}
}

// treeEntry is one entry of `git ls-tree -l`.
type treeEntry struct {
	mode, obj string
	size      int64
	missing   bool
	why       string // why the file cannot be read, "" when it can
}

// parseLsTree reads `git ls-tree -z` output, "MODE TYPE OBJ\tPATH\0", or with -l "MODE TYPE
// OBJ SIZE\tPATH\0" (size -1 without), keeping the entries whose path want accepts (nil: all).
func parseLsTree(out []byte, want func(string) bool) (map[string]treeEntry, error) {
	es := map[string]treeEntry{}
	for len(out) > 0 {
		rec := out
		if i := bytes.IndexByte(out, 0); i >= 0 {
			rec, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if ok && want != nil && !want(string(p)) {
			continue
		}
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 && len(f) != 4 {
			return nil, fmt.Errorf("an entry git does not write: %q", clip(string(rec), 100))
		}
		size := int64(-1)
		if len(f) == 4 {
			size, _ = strconv.ParseInt(f[3], 10, 64) // "-" for a tree or gitlink: 0
		}
		es[string(p)] = treeEntry{mode: f[0], obj: f[2], size: size}
	}
	return es, nil
}

// lookup returns the entry at the repository path p, with why it cannot be read as a file:
// missing, a symbolic link (or under one, which git's tree does not follow either), a folder
// or a submodule.
func (s *side) lookup(ctx context.Context, p string) (treeEntry, error) {
	if e, ok := s.found[p]; ok {
		return e, nil
	}
	s.lookups++
	args := []string{"ls-tree", "-z", "-l", "--full-tree", s.rev, "--"}
	parts := strings.Split(p, "/")
	for i := range parts {
		args = append(args, strings.Join(parts[:i+1], "/"))
	}
	out, err := s.git(ctx, s.env, nil, args...)
	if err != nil {
		return treeEntry{}, fmt.Errorf("reading the tree %s: %w", s.where, err)
	}
	es, err := parseLsTree(out, nil)
	if err != nil {
		return treeEntry{}, err
	}
	e, ok := es[p]
	switch {
	case ok && e.mode == "120000":
		e.why = "it is a symbolic link, which frognano does not follow"
	case ok && (e.mode == "100644" || e.mode == "100755"):
	case ok:
		e.why = "it is not a regular file"
	default:
		e = treeEntry{missing: true, why: "there is no such file in the tree"}
		for i := range parts[:len(parts)-1] {
			if pe, ok := es[strings.Join(parts[:i+1], "/")]; ok && pe.mode == "120000" {
				e.why = "it is under a symbolic link, which frognano does not follow"
			}
		}
	}
	s.found[p] = e
	return e, nil
}

// manifests lists the files of the tree for which want is true, with their entries (sizes
// unknown); more than max is errTooMany, with the first max by rank (lowest first), then path. ls-tree takes no
// wildcard, so git lists the whole tree and want filters it as it is read; without -l, which
// would make git open every object of the tree for its size.
func (s *side) manifests(ctx context.Context, want func(string) bool, max int, rank func(string) int) (map[string]treeEntry, error) {
	out, err := s.git(ctx, s.env, nil, "ls-tree", "-r", "-z", "--full-tree", s.rev)
	if err != nil {
		return nil, fmt.Errorf("listing the tree %s: %w", s.where, err)
	}
	all, err := parseLsTree(out, want)
	if err != nil {
		return nil, err
	}
	var paths []string
	for p := range all {
		if want(p) {
			paths = append(paths, p)
		}
	}
	sort.Slice(paths, func(i, j int) bool {
		if ri, rj := rank(paths[i]), rank(paths[j]); ri != rj {
			return ri < rj
		}
		return paths[i] < paths[j]
	})
	var tooMany error
	if len(paths) > max {
		paths, tooMany = paths[:max], errTooMany
	}
	kept := map[string]treeEntry{}
	for _, p := range paths {
		e := all[p]
		switch e.mode {
		case "120000":
			e.why = "it is a symbolic link, which frognano does not follow"
		case "100644", "100755":
		default:
			e.why = "it is not a regular file"
		}
		kept[p] = e
		s.found[p] = e
	}
	return kept, tooMany
}

var errTooMany = fmt.Errorf("too many")

// read returns the content of a regular file's entry, within the report's bounds: a lock
// file up to MaxManifestBytes, a file a person writes up to maxTextManifestBytes, and all of
// them together up to maxParsedBytes. why says why it was not read.
func (s *side) read(ctx context.Context, rep *Report, p string, e treeEntry) ([]byte, string) {
	if e.why != "" {
		return nil, e.why
	}
	limit := int64(MaxManifestBytes)
	if !isLockFile(p) {
		limit = maxTextManifestBytes
	}
	if e.size < 0 {
		out, err := s.git(ctx, s.env, nil, "cat-file", "-s", e.obj)
		if err != nil {
			return nil, "git could not read it"
		}
		if e.size, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err != nil {
			return nil, "git could not read it"
		}
	}
	if e.size > limit || e.size < 0 {
		return nil, fmt.Sprintf("it is over %d MiB", limit>>20)
	}
	if rep.parsed+e.size > maxParsedBytes {
		return nil, fmt.Sprintf("the dependency files read for the patch are over %d MiB together", maxParsedBytes>>20)
	}
	rep.parsed += e.size
	content, err := s.git(ctx, s.env, nil, "cat-file", "blob", e.obj)
	if err != nil || int64(len(content)) > limit {
		return nil, "git could not read it"
	}
	return content, ""
}

// Bounds of an include's path: git is asked about each of its folders.
const (
	maxIncludePath  = 1024
	maxIncludeDepth = 64
)

// includeTarget resolves an include written in the file at from to a repository path, or
// says why it is not followed: absolute, from a home folder, or out of the repository.
func includeTarget(from string, inc Include) (string, string) {
	p := inc.Path
	if p == "" {
		return "", "it names no file"
	}
	if len(p) > maxIncludePath || strings.Count(p, "/") > maxIncludeDepth {
		return "", fmt.Sprintf("its path is over %d bytes or %d folders deep, which frognano does not follow", maxIncludePath, maxIncludeDepth)
	}
	if strings.HasPrefix(p, "/") {
		return "", "it names a file outside the repository (an absolute path), which frognano does not read"
	}
	if strings.HasPrefix(p, "~") {
		return "", "it names a file outside the repository (in a home folder), which frognano does not read"
	}
	t, ok := resolve(from, p)
	if !ok {
		return "", "it names a file outside the repository, which frognano does not read"
	}
	if path.Base(t) == ".git" || strings.HasPrefix(t, ".git/") || strings.Contains(t, "/.git/") {
		return "", "it names a file in .git, which frognano does not read"
	}
	return t, ""
}
