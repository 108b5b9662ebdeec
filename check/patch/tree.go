package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/frognano/frognano/internal/hostgit"
)

// The checks in this file do not trust the diff text at all. The parser above decides what a
// diff claims; git apply decides what it does (it takes a missing mode from the base tree, for
// example). So the patch is applied on the host, to the base commit of the host's own clone, in
// a throwaway index, and the tree that comes out is compared with the base tree by git itself:
// every changed path, with its old and new mode and object, as git will commit it.

// Git runs one git command on the host's own clone (never a .git the sandbox could write) and
// returns its standard output. env holds extra KEY=VALUE settings for this call.
type Git func(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error)

// HostGit returns a Git that runs the git CLI in dir under the rule of every host git
// (internal/hostgit: no system, global or user configuration or attributes, no hooks, no
// fsmonitor, no prompt). dir is the host's clone.
func HostGit(dir string) Git {
	return func(ctx context.Context, env []string, stdin []byte, args ...string) ([]byte, error) {
		out, err := hostgit.Run(ctx, dir, env, stdin, args...)
		var ge *hostgit.Error
		if errors.As(err, &ge) {
			return out, fmt.Errorf("git %s: %w: %s", ge.Cmd, ge.Err, quote(ge.Stderr))
		}
		return out, err
	}
}

// ApplyError is a patch that git apply refused on the base commit.
type ApplyError struct{ Err error }

func (e *ApplyError) Error() string {
	return "the patch does not apply to the base commit: " + e.Err.Error()
}
func (e *ApplyError) Unwrap() error { return e.Err }

// ApplyToBase applies diff to the base commit with `git apply --cached` in a throwaway index,
// writing the new objects to a throwaway object directory (the clone's objects are read through
// an alternate, so the clone is not modified), and checks the resulting tree with CheckTree.
// It returns the tree's id, an *ApplyError when git cannot apply the diff, or the
// *RefusedError of CheckTree.
func ApplyToBase(ctx context.Context, git Git, base string, diff []byte, opt Options) (string, error) {
	sc, err := NewScratch(ctx, git, base)
	if err != nil {
		return "", err
	}
	defer sc.Close()
	env := sc.Env
	if err := sc.Apply(ctx, git, diff); err != nil {
		return "", err
	}
	out, err := git(ctx, env, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing the patched tree: %w", err)
	}
	tree := strings.TrimSpace(string(out))
	if err := checkTree(ctx, git, env, base, tree, opt); err != nil {
		return "", err
	}
	return tree, nil
}

// CheckTree compares tree (what applying a patch produced on the host) with the base commit and
// returns a *RefusedError when any changed path breaks a rule: a path that fails checkPath (into
// .git, absolute, "..", control characters), a gitlink added, changed or removed, a new or
// changed symlink that leaves the repository or reaches .git once every symlink of the tree on
// its way is followed, or a change under .github/workflows/ or .github/actions/ unless
// opt.AllowWorkflowChanges. Then, with opt.Values, every published file is read whole and one
// that holds a value frognano keeps secret refuses the patch (*ValueError). It is the last
// check before a commit is pushed.
func CheckTree(ctx context.Context, git Git, base, tree string, opt Options) error {
	return checkTree(ctx, git, nil, base, tree, opt)
}

// TreeChange is one entry of `git diff-tree --raw` between the base and a patched tree.
type TreeChange struct {
	OldMode, NewMode string // "000000" on the side where the path does not exist
	NewObject        string
	Path             string
}

func checkTree(ctx context.Context, git Git, env []string, base, tree string, opt Options) error {
	out, err := git(ctx, env, nil, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--full-index", base, tree)
	if err != nil {
		return fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	changes, err := parseRawDiff(out)
	if err != nil {
		return fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	var rej []Rejected
	for _, c := range changes {
		switch why := checkPath(c.Path); {
		case why != "":
			rej = append(rej, Rejected{Path: c.Path, Reason: why})
		case c.OldMode == ModeGitlink || c.NewMode == ModeGitlink:
			rej = append(rej, Rejected{Path: c.Path, Reason: "submodule (gitlink) change"})
		case !opt.AllowWorkflowChanges && isWorkflowPath(c.Path):
			rej = append(rej, Rejected{Path: c.Path, Reason: "change under .github/workflows or .github/actions"})
		}
	}
	if len(changes) > 0 {
		// Every symlink of the new tree is resolved, not only the new ones: a change elsewhere
		// (a directory replaced by a link) can make a link the patch never touched escape.
		// A link that already broke the rules in the base, the same way, is the repository's
		// own and is left alone.
		links, err := treeLinks(ctx, git, env, tree)
		if err != nil {
			return err
		}
		var baseLinks map[string]string
		for _, p := range sortedKeys(links) {
			why := resolveLink(p, links)
			if why == "" {
				continue
			}
			if baseLinks == nil {
				if baseLinks, err = treeLinks(ctx, git, env, base); err != nil {
					return err
				}
			}
			if t, ok := baseLinks[p]; ok && t == links[p] && resolveLink(p, baseLinks) == why {
				continue
			}
			rej = append(rej, Rejected{Path: p, Reason: why})
		}
	}
	if len(rej) > 0 {
		return &RefusedError{Rejected: rej}
	}
	return checkValues(ctx, git, env, base, tree, opt.Values)
}

// parseRawDiff reads `git diff-tree -r -z --raw --no-renames` output:
// ":OLDMODE NEWMODE OLDOID NEWOID STATUS\0PATH\0" per entry.
func parseRawDiff(out []byte) ([]TreeChange, error) {
	var changes []TreeChange
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		meta := string(fields[i])
		if meta == "" && i == len(fields)-1 {
			break
		}
		parts := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(parts) != 5 || i+1 >= len(fields) {
			return nil, fmt.Errorf("unexpected diff-tree entry %s", quote(meta))
		}
		i++
		changes = append(changes, TreeChange{OldMode: parts[0], NewMode: parts[1], NewObject: parts[3], Path: string(fields[i])})
	}
	return changes, nil
}

// treeLinks returns every symlink of tree with its target.
func treeLinks(ctx context.Context, git Git, env []string, tree string) (map[string]string, error) {
	out, err := git(ctx, env, nil, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return nil, fmt.Errorf("listing the patched tree: %w", err)
	}
	var paths, oids []string
	for _, e := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(e), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // MODE TYPE OID
		if len(f) == 3 && f[0] == ModeSymlink {
			paths, oids = append(paths, name), append(oids, f[2])
		}
	}
	links := make(map[string]string, len(paths))
	if len(paths) == 0 {
		return links, nil
	}
	// One cat-file for all of them: "OID blob SIZE\nDATA\n" per object.
	data, err := git(ctx, env, []byte(strings.Join(oids, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("reading symlink targets: %w", err)
	}
	for i, p := range paths {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, errors.New("reading symlink targets: short cat-file output")
		}
		var oid, typ string
		var size int
		if _, err := fmt.Sscanf(string(data[:nl]), "%s %s %d", &oid, &typ, &size); err != nil || oid != oids[i] || nl+1+size+1 > len(data) {
			return nil, fmt.Errorf("reading symlink targets: unexpected cat-file header %s", quote(string(data[:nl])))
		}
		links[p] = string(data[nl+1 : nl+1+size])
		data = data[nl+1+size+1:]
	}
	return links, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// maxLinkHops bounds how many symlinks one resolution follows (Linux's own limit is 40).
const maxLinkHops = 40

// resolveLink follows the symlink at link through the symlinks of the tree, lexically, and
// says why it is not allowed: an absolute target, a ".." above the root, a path into .git, a
// loop, or a target a checkout could not hold. A target that does not exist is allowed.
func resolveLink(link string, links map[string]string) string {
	target := links[link]
	if why := checkSymlink(link, target); why != "" {
		return why
	}
	dir := strings.Split(link, "/")
	stack := dir[:len(dir)-1]
	rest := strings.Split(target, "/")
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			if len(stack) == 0 {
				return "symlink escapes the repository"
			}
			stack = stack[:len(stack)-1]
			continue
		case isDotGit(c):
			return "symlink into .git"
		}
		stack = append(stack, c)
		next, ok := links[strings.Join(stack, "/")]
		if !ok {
			continue
		}
		if hops++; hops > maxLinkHops {
			return "symlink loop"
		}
		if strings.HasPrefix(next, "/") || next == "" || hasControl(next) || strings.Contains(next, `\`) {
			return "symlink resolves through " + strings.Join(stack, "/") + " to a path outside the repository"
		}
		stack = stack[:len(stack)-1]
		rest = append(strings.Split(next, "/"), rest...)
	}
	return ""
}
