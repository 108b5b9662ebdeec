package githubapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/hostgit"
)

// MaxBlobSize is the largest file GitHub's Git database API takes (100 MB per blob). A patch
// with a larger file is refused before anything is written.
const MaxBlobSize = 100 << 20

// builtTree is the tree frognano built and checked on the host for one patch, and what differs
// from the base commit's tree: the entries the API's tree is made of.
type builtTree struct {
	tree, baseTree string
	changes        []treeChange
}

// treeChange is one path the patch adds, changes or deletes, from `git diff-tree --raw`.
type treeChange struct {
	path     string
	mode     string // the new mode; for a deletion, the old one
	sha      string // the new object; "" for a deletion
	deleted  bool
	upstream bool   // the object is in the base commit's tree, so GitHub has it
	content  []byte // the blob's bytes when GitHub may not have it
}

// buildTree applies the patch in a throwaway index (the clone's index, working tree and HEAD
// stay as they were, so a retry starts from the same state), writes the tree, checks it
// (patch.CheckTree, the secrets check) and reads what changed from BaseSHA's tree, with the
// contents GitHub may not have.
func (c *Client) buildTree(ctx context.Context, in PublishInput) (*builtTree, error) {
	tmp, err := os.MkdirTemp("", "frognano-index-")
	if err != nil {
		return nil, fmt.Errorf("creating temporary index: %w", err)
	}
	defer os.RemoveAll(tmp)
	indexEnv := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := c.git(ctx, gitRun{dir: in.Dir, env: indexEnv, args: []string{"read-tree", in.BaseSHA}}); err != nil {
		return nil, fault.Permanent(fmt.Errorf("reading base commit: %w", err))
	}
	if _, err := c.git(ctx, gitRun{dir: in.Dir, env: indexEnv, stdin: in.Patch,
		args: []string{"apply", "--cached", "--binary", "--whitespace=nowarn", "-"}}); err != nil {
		return nil, fault.Permanent(fmt.Errorf("applying patch: %w", err))
	}
	tree, err := c.git(ctx, gitRun{dir: in.Dir, env: indexEnv, args: []string{"write-tree"}})
	if err != nil {
		return nil, fmt.Errorf("writing tree: %w", err)
	}
	// The last check before anything is written to GitHub, on the tree git really built:
	// whatever the patch's text claimed, no path into .git, no symlink leaving the repository,
	// no gitlink change, no workflow change unless the operator allows it. This tree, and no
	// other, is what the commit on GitHub holds (checked after the commit is made).
	// Every file it publishes is read whole, as bytes, for the secrets frognano was given (text
	// can be redacted; a file cannot): the diff's text would not show a value in a binary
	// file, or one the patch encoded.
	err = patch.CheckTree(ctx, patch.HostGit(in.Dir), in.BaseSHA, tree,
		patch.Options{AllowWorkflowChanges: c.app.cfg.AllowWorkflowChanges, Values: SecretMatcher()})
	var held *patch.ValueError
	if errors.As(err, &held) {
		return nil, fault.Permanent(fmt.Errorf("checking the patched tree: %w: %s", ErrPatchHoldsSecret, held.List()))
	}
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("checking the patched tree: %w", err))
	}
	if err := c.checkSecrets(ctx, in); err != nil {
		return nil, err
	}
	baseTree, err := c.git(ctx, gitRun{dir: in.Dir, args: []string{"rev-parse", "--verify", in.BaseSHA + "^{tree}"}})
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("reading the base commit's tree: %w", err))
	}
	changes, err := treeChanges(ctx, in.Dir, baseTree, tree)
	if err != nil {
		return nil, err
	}
	return &builtTree{tree: tree, baseTree: baseTree, changes: changes}, nil
}

// treeChanges lists what differs between two trees of dir, with the contents of the blobs that
// are not in the base tree.
func treeChanges(ctx context.Context, dir, baseTree, tree string) ([]treeChange, error) {
	raw, err := hostgit.Run(ctx, dir, nil, nil, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--full-index", baseTree, tree)
	if err != nil {
		return nil, fmt.Errorf("listing the patch's changes: %w", err)
	}
	changes, err := parseRawDiff(raw)
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("listing the patch's changes: %w", err))
	}
	inBase, err := hostgit.Run(ctx, dir, nil, nil, "ls-tree", "-r", "-z", "--object-only", baseTree)
	if err != nil {
		return nil, fmt.Errorf("listing the base tree: %w", err)
	}
	known := map[string]bool{}
	for _, sha := range strings.Split(string(inBase), "\x00") {
		known[strings.TrimSpace(sha)] = true
	}
	var want []string
	for i := range changes {
		ch := &changes[i]
		if ch.deleted {
			continue
		}
		if ch.mode == "160000" {
			// patch.CheckTree refuses a gitlink change; this is the second wall.
			return nil, fault.Permanent(fmt.Errorf("the patch changes the submodule %q, which frognano never publishes", ch.path))
		}
		if known[ch.sha] {
			ch.upstream = true
			continue
		}
		want = append(want, ch.sha)
	}
	contents, err := readBlobs(ctx, dir, want)
	if err != nil {
		return nil, err
	}
	for i := range changes {
		ch := &changes[i]
		if !ch.deleted && !ch.upstream {
			ch.content = contents[ch.sha]
			if len(ch.content) > MaxBlobSize {
				return nil, fault.Permanent(fmt.Errorf("the patch's file %q is %d bytes; GitHub's API takes files of at most %d bytes (100 MB), so it is not published", ch.path, len(ch.content), MaxBlobSize))
			}
		}
	}
	return changes, nil
}

// parseRawDiff reads `git diff-tree -r -z --raw --no-renames --full-index`: for each path
// ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS\0PATH\0".
func parseRawDiff(raw []byte) ([]treeChange, error) {
	var out []treeChange
	fields := bytes.Split(raw, []byte{0})
	for i := 0; i < len(fields); i++ {
		meta := string(fields[i])
		if meta == "" {
			continue
		}
		if !strings.HasPrefix(meta, ":") || i+1 >= len(fields) {
			return nil, fmt.Errorf("unexpected diff-tree record %q", clipText(meta))
		}
		i++
		path := string(fields[i])
		f := strings.Fields(meta[1:])
		if len(f) != 5 || path == "" || !validMode(f[0]) || !validMode(f[1]) || !shaPattern.MatchString(f[2]) || !shaPattern.MatchString(f[3]) {
			return nil, fmt.Errorf("unexpected diff-tree record %q", clipText(meta))
		}
		switch f[4] {
		case "D":
			out = append(out, treeChange{path: path, mode: f[0], deleted: true})
		case "A", "M", "T":
			out = append(out, treeChange{path: path, mode: f[1], sha: f[3]})
		default:
			return nil, fmt.Errorf("unexpected change %q of %q", f[4], path)
		}
	}
	return out, nil
}

func validMode(m string) bool {
	switch m {
	case "000000", "100644", "100755", "120000", "160000":
		return true
	}
	return false
}

func clipText(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// readBlobs reads the named blobs of dir with one `git cat-file --batch`.
func readBlobs(ctx context.Context, dir string, shas []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(shas) == 0 {
		return out, nil
	}
	raw, err := hostgit.Run(ctx, dir, nil, []byte(strings.Join(shas, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("reading the patch's files: %w", err)
	}
	for len(raw) > 0 {
		nl := bytes.IndexByte(raw, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("reading the patch's files: truncated answer of cat-file")
		}
		head := strings.Fields(string(raw[:nl]))
		if len(head) != 3 || head[1] != "blob" {
			return nil, fmt.Errorf("reading the patch's files: %q is not a blob", clipText(string(raw[:nl])))
		}
		size, err := strconv.Atoi(head[2])
		if err != nil || size < 0 || nl+1+size > len(raw) {
			return nil, fmt.Errorf("reading the patch's files: bad size in %q", clipText(string(raw[:nl])))
		}
		out[head[0]] = raw[nl+1 : nl+1+size]
		raw = raw[min(nl+1+size+1, len(raw)):]
	}
	return out, nil
}
