package scanner

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/frognano/frognano/check/patch"
)

// Reset is a configuration file of a scanner whose content in the patched tree is not what
// the base commit (the commit configuration is taken from) has: the scanner scans the base's
// version instead, or none.
type Reset struct {
	Path string
	// InBase and InPatched say whether the base commit and the patched tree have the file:
	// both, the scanner read the base's version; only the base, the base's version is put
	// back (the patch removed it); only the patched tree, it is left out (the patch added it).
	InBase, InPatched bool
	// Kept is set when the base's version could not be put back because the patched tree
	// has a file where the base has one of its folders, or a folder where the base has the
	// file: the scanner saw neither version.
	Kept bool
}

// entry is one file of a tree: its mode and object.
type entry struct{ mode, oid string }

// Trees is the patched tree of one patch, made on the host once for every scanner: the patch
// applied by git to the base in a throwaway index (patch.Scratch), and the files of both that
// tree and the commit configuration files are taken from. Close removes it.
type Trees struct {
	git      patch.Git
	sc       *patch.Scratch
	base     string
	diff     []byte
	patched  string           // the patched tree's id
	files    map[string]entry // the patched tree's blobs
	dirs     map[string]bool  // the patched tree's folders
	baseFile map[string]entry // the configuration commit's blobs
	baseDirs map[string]bool
	moved    []string // the patched tree's files that git finds moved from another path
}

// NewTrees applies diff to base in a throwaway index of the host's clone and reads the files of
// the result and of configAt, the commit whose configuration files the scanners get (the base
// branch's head: for a follow-up that is not base, whose configuration an earlier run's patch
// may have changed). Nothing is read from a sandbox.
func NewTrees(ctx context.Context, git patch.Git, base, configAt string, diff []byte) (*Trees, error) {
	sc, err := patch.NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	t := &Trees{git: git, sc: sc, base: base, diff: diff}
	fail := func(err error) (*Trees, error) {
		sc.Close()
		return nil, err
	}
	if err := sc.Apply(ctx, git, diff); err != nil {
		return fail(err)
	}
	out, err := git(ctx, sc.Env, nil, "write-tree")
	if err != nil {
		return fail(fmt.Errorf("writing the patched tree: %w", err))
	}
	t.patched = strings.TrimSpace(string(out))
	if t.moved, err = t.renames(ctx); err != nil {
		return fail(err)
	}
	if t.files, t.dirs, err = t.list(ctx, t.patched); err != nil {
		return fail(err)
	}
	if t.baseFile, t.baseDirs, err = t.list(ctx, configAt); err != nil {
		return fail(err)
	}
	return t, nil
}

// Close removes the throwaway index and objects.
func (t *Trees) Close() { t.sc.Close() }

// list reads every blob of tree-ish (files and symbolic links; gitlinks are not configuration)
// and the folders above them.
func (t *Trees) list(ctx context.Context, treeish string) (map[string]entry, map[string]bool, error) {
	out, err := t.git(ctx, t.sc.Env, nil, "ls-tree", "-r", "-z", "--full-tree", treeish)
	if err != nil {
		return nil, nil, fmt.Errorf("listing %.12s: %w", treeish, err)
	}
	files, dirs := map[string]entry{}, map[string]bool{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta) // MODE TYPE OID
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		files[name] = entry{f[0], f[2]}
		for d := name; strings.Contains(d, "/"); {
			d = d[:strings.LastIndexByte(d, '/')]
			dirs[d] = true
		}
	}
	return files, dirs, nil
}

// For returns what the scanner with the configuration patterns ps is to scan: the diff that
// makes, from base, the patched tree with every file ps names as the configuration commit has
// it (put back, or left out when it has none), and the files that differed. With nothing to
// reset, the diff is the patch itself.
func (t *Trees) For(ctx context.Context, ps []Pattern) ([]byte, []Reset, error) {
	var resets []Reset
	paths := map[string]bool{}
	for p := range t.files {
		if matchAny(ps, p) {
			paths[p] = true
		}
	}
	for p := range t.baseFile {
		if matchAny(ps, p) {
			paths[p] = true
		}
	}
	for p := range paths {
		have, inPatched := t.files[p]
		want, inBase := t.baseFile[p]
		if inPatched == inBase && have == want {
			continue
		}
		resets = append(resets, Reset{Path: p, InBase: inBase, InPatched: inPatched})
	}
	if len(resets) == 0 {
		return t.diff, nil, nil
	}
	sort.Slice(resets, func(i, j int) bool { return resets[i].Path < resets[j].Path })

	// Removals first, then what the base has: update-index refuses a file where a folder is
	// (or the reverse), and a removal may be what makes room.
	var info bytes.Buffer
	const zero = "0000000000000000000000000000000000000000000000000000000000000000"
	for _, r := range resets {
		if r.InPatched {
			fmt.Fprintf(&info, "0 %s\t%s\x00", zero[:len(t.files[r.Path].oid)], r.Path)
		}
	}
	removed := map[string]bool{}
	for _, r := range resets {
		if r.InPatched {
			removed[r.Path] = true
		}
	}
	for i, r := range resets {
		if !r.InBase {
			continue
		}
		if t.blocked(r.Path, removed) {
			resets[i].Kept = true
			continue
		}
		e := t.baseFile[r.Path]
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.oid, r.Path)
	}
	env := t.sc.Env
	if _, err := t.git(ctx, env, nil, "read-tree", t.patched); err != nil {
		return nil, nil, fmt.Errorf("reading the patched tree: %w", err)
	}
	if _, err := t.git(ctx, env, info.Bytes(), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
		return nil, nil, fmt.Errorf("putting back the base's configuration files: %w", err)
	}
	out, err := t.git(ctx, env, nil, "write-tree")
	if err != nil {
		return nil, nil, fmt.Errorf("writing the scanned tree: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	diff, err := t.git(ctx, env, nil, "diff", "--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff",
		"--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", t.base, tree)
	if err != nil {
		return nil, nil, fmt.Errorf("taking the scanned tree's diff: %w", err)
	}
	return diff, resets, nil
}

// blocked reports whether the base's file p cannot go back into the patched tree: a folder
// above it is a file there (one the patch did not have reset), or p is a folder there.
func (t *Trees) blocked(p string, removed map[string]bool) bool {
	if t.dirs[p] {
		return true
	}
	for d := p; strings.Contains(d, "/"); {
		d = d[:strings.LastIndexByte(d, '/')]
		if _, ok := t.files[d]; ok && !removed[d] {
			return true
		}
	}
	return false
}

// Files returns the paths of the resets, for Changed.Without.
func Files(rs []Reset) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Path
	}
	return out
}

// Moved returns the files the patch moved (git's rename detection, as check/secrets.AddedLines
// reads the patch), by their new paths. A moved file's lines are not added lines in git's view,
// but the code is new where it now is (a file moved out of examples/ into the code that is
// shipped), so a scanner's findings anywhere in it are the patch's (Changed.WithWhole).
func (t *Trees) Moved() []string { return t.moved }

// renames lists the new paths of the files git finds renamed between base and the patched tree.
func (t *Trees) renames(ctx context.Context) ([]string, error) {
	out, err := t.git(ctx, t.sc.Env, nil, "diff-tree", "-r", "-z", "--find-renames", "--name-status", "--no-ext-diff",
		"--no-textconv", t.base, t.patched)
	if err != nil {
		return nil, fmt.Errorf("reading what the patch moved: %w", err)
	}
	var moved []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		switch st := recs[i]; {
		case strings.HasPrefix(st, "R") || strings.HasPrefix(st, "C"):
			if i+2 < len(recs) {
				moved = append(moved, recs[i+2])
			}
			i += 2
		case st != "":
			i++ // STATUS, PATH
		}
	}
	sort.Strings(moved)
	return moved, nil
}
