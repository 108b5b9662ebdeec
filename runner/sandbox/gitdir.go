package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/frognano/frognano/internal/hostgit"
)

// freshGitDir makes, in a temporary folder, a repository that holds only what the sandbox
// may see of root's: the commits reachable from HEAD (fetched through git's own transport,
// so no stash, other branch, reflog or unreachable object comes along), HEAD on the same
// branch name (or detached at the same commit), and an index read from HEAD. Its .git,
// at dir/.git, is what CopyRepo copies instead of root's own. The caller removes dir.
func freshGitDir(ctx context.Context, root string) (dir string, err error) {
	head, err := gitIn(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("reading HEAD: %w", err)
	}
	branch, _ := gitIn(ctx, root, "symbolic-ref", "-q", "--short", "HEAD") // empty when detached
	return freshGitDirOf(ctx, root, head, branch)
}

// freshGitDirAt is freshGitDir for commit instead of HEAD: HEAD is detached at commit.
func freshGitDirAt(ctx context.Context, root, commit string) (string, error) {
	head, err := gitIn(ctx, root, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{commit}")
	if err != nil || head == "" {
		return "", fmt.Errorf("reading %.12s: %w", commit, errors.Join(errNoCommit, err))
	}
	return freshGitDirOf(ctx, root, head, "")
}

// freshGitDirOf makes the repository of freshGitDir holding head's history, with HEAD on
// branch, or detached when branch is empty.
func freshGitDirOf(ctx context.Context, root, head, branch string) (dir string, err error) {
	format, err := gitIn(ctx, root, "rev-parse", "--show-object-format")
	if err != nil {
		return "", fmt.Errorf("reading the object format: %w", err)
	}
	dir, err = os.MkdirTemp("", "frognano-gitdir-")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	fresh := func(args ...string) (string, error) { return gitIn(ctx, dir, args...) }
	if _, err := fresh("init", "-q", "--object-format="+format, "--initial-branch=frognano-base"); err != nil {
		return "", err
	}
	ref := "refs/frognano/base"
	if branch != "" {
		ref = "refs/heads/" + branch
	}
	// --no-write-fetch-head: FETCH_HEAD would name the host path.
	if _, err := fresh("fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--upload-pack="+uploadPack, "file://"+root, "+"+head+":"+ref); err != nil {
		return "", fmt.Errorf("fetching HEAD's history: %w", err)
	}
	if branch != "" {
		_, err = fresh("symbolic-ref", "HEAD", ref)
	} else {
		if _, err = fresh("update-ref", "--no-deref", "HEAD", head); err == nil {
			_, err = fresh("update-ref", "-d", ref)
		}
	}
	if err != nil {
		return "", err
	}
	if _, err := fresh("read-tree", "HEAD"); err != nil {
		return "", err
	}
	return dir, nil
}

// uploadPack is the host's side of that fetch. Git hands a local upload-pack none of the
// fetch's own -c settings, so they are given on its command line. What the host's packs hold
// goes over as it is (their deltas and compression reused); loose objects (a local checkout's
// recent commits, or all of a repository never packed) go with no delta search and no
// compression: searching 25 MB of loose objects for deltas took 4 s of CPU here and made
// copying a 50 MB repository most of a sandbox's start, while they then take in the sandbox's
// workspace what their content takes. allowAnySHA1InWant lets the fetch name HEAD's commit.
const uploadPack = "git -c pack.window=0 -c pack.compression=0 -c uploadpack.allowAnySHA1InWant=true upload-pack"

// gitIn runs git in dir under the rule of every host git (internal/hostgit), and returns its
// trimmed output. On top of the rule, visibly: the local fetch of freshGitDirOf needs the file
// protocol, and may name HEAD's commit (uploadPack gives its upload-pack the same setting).
func gitIn(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := hostgit.Run(ctx, dir, nil, nil, append([]string{
		"-c", "protocol.file.allow=always", "-c", "uploadpack.allowAnySHA1InWant=true"}, args...)...)
	var ge *hostgit.Error
	if errors.As(err, &ge) {
		return "", fmt.Errorf("git %s in %s: %v: %s", args[0], filepath.Base(dir), ge.Err, ge.Stderr)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
