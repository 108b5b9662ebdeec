package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scratch is a throwaway index and object directory over a clone: the clone's objects are read
// through an alternate, and everything git writes (the index, new blobs and trees) goes to a
// temporary folder, so the clone is never modified. Every git call on it takes Env. Whoever
// applies a patch on the host to look at the tree it makes (ApplyToBase, the secrets scan, the
// dependency listing, an evaluation's test patch) starts from one.
type Scratch struct {
	Env []string
	dir string
}

// NewScratch makes a Scratch whose index holds base. Close removes it.
func NewScratch(ctx context.Context, git Git, base string) (*Scratch, error) {
	objects, err := git(ctx, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return nil, fmt.Errorf("finding the clone's objects: %w", err)
	}
	dir, err := os.MkdirTemp("", "frognano-scratch-")
	if err != nil {
		return nil, fmt.Errorf("creating a throwaway index: %w", err)
	}
	s := &Scratch{dir: dir, Env: []string{
		"GIT_INDEX_FILE=" + filepath.Join(dir, "index"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(dir, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + strings.TrimSpace(string(objects)),
	}}
	if err := os.Mkdir(filepath.Join(dir, "objects"), 0o700); err != nil {
		s.Close()
		return nil, fmt.Errorf("creating a throwaway object directory: %w", err)
	}
	if _, err := git(ctx, s.Env, nil, "read-tree", base); err != nil {
		s.Close()
		return nil, fmt.Errorf("reading the base commit %s: %w", quote(base), err)
	}
	return s, nil
}

// Apply applies diff to the index with `git apply --cached`: an *ApplyError when git cannot
// (not git's message, which quotes the lines it could not place, only that it could not), or
// the context's error.
func (s *Scratch) Apply(ctx context.Context, git Git, diff []byte) error {
	if _, err := git(ctx, s.Env, diff, "apply", "--cached", "--binary", "--whitespace=nowarn", "-"); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ApplyError{err}
	}
	return nil
}

// Close removes the scratch index and objects.
func (s *Scratch) Close() { _ = os.RemoveAll(s.dir) }
