package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/hostgit"
)

// sources finds and caches the repositories tasks name: a local clone is used in place (read,
// never written); a clone URL is cloned once, bare, under the output folder's .repos/. Each
// use checks the task again against the policy, on the host as it is now (a folder's links
// and a host name's addresses may have changed since the task was accepted), and gives git
// what the check resolved: the real folder, the checked addresses.
type sources struct {
	policy *policy
	cache  string // where URLs are cloned
	// gitEnv is added to the environment of the git that clones a URL, and ssh is the ssh
	// program it runs ("": ssh on PATH); tests set a CA file and a program that records.
	gitEnv []string
	ssh    string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// source returns the local repository task's checkout is cloned from.
func (s *sources) source(ctx context.Context, t Task) (string, error) {
	switch {
	case t.RepoPath != "":
		return s.policy.repoPath(t.RepoPath)
	case t.RepoURL != "":
		pin, err := s.policy.checkURL(ctx, t.RepoURL)
		if err != nil {
			return "", err
		}
		return s.clone(ctx, pin)
	case s.policy.repos != "" && t.Repo != "":
		repos := s.policy.repos
		for _, name := range []string{t.Repo, strings.ReplaceAll(t.Repo, "/", "__")} {
			p := filepath.Join(repos, filepath.FromSlash(name))
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return filepath.Abs(p)
			}
		}
		return "", fmt.Errorf("no clone of %s under %s (looked for %s and %s)", t.Repo, repos, t.Repo, strings.ReplaceAll(t.Repo, "/", "__"))
	}
	return "", errors.New("the task names no repository it can be found in: give repo_path or repo_url in the task, or --repos DIR holding a clone at DIR/OWNER/NAME")
}

// clone makes (once) a bare clone of the checked URL in the cache and returns its path. git
// connects only to the addresses the check saw (pinnedURL.git).
func (s *sources) clone(ctx context.Context, pin *pinnedURL) (string, error) {
	raw := pin.u.String()
	sum := sha256.Sum256([]byte(raw))
	dst := filepath.Join(s.cache, hex.EncodeToString(sum[:8])+".git")
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]*sync.Mutex{}
	}
	l := s.locks[dst]
	if l == nil {
		l = &sync.Mutex{}
		s.locks[dst] = l
	}
	s.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	if _, err := os.Stat(filepath.Join(dst, "HEAD")); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(s.cache, 0o755); err != nil {
		return "", err
	}
	tmp := dst + ".partial"
	os.RemoveAll(tmp)
	config, url := pin.git(s.ssh)
	args := append(config, "clone", "--quiet", "--bare", "--", url, tmp)
	if _, err := hostgit.Run(ctx, "", s.gitEnv, nil, args...); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("cloning %s: %w", raw, err)
	}
	return dst, os.Rename(tmp, dst)
}

// checkout makes dst a checkout of src at base: a clone sharing src's objects, detached at
// base, that the runner reads as it reads `frognano run`'s checkout. src is never written.
func checkout(ctx context.Context, src, base, dst string) error {
	if _, err := hostgit.Run(ctx, "", nil, nil, "clone", "--quiet", "--shared", "--no-checkout", "--", src, dst); err != nil {
		return fmt.Errorf("cloning %s: %w", src, err)
	}
	if _, err := hostgit.Run(ctx, dst, nil, nil, "checkout", "--quiet", "--detach", base+"^{commit}"); err != nil {
		return fmt.Errorf("checking out base_commit %s: %w", base, err)
	}
	return nil
}

// errTestPatch is a test patch that does not apply to the base commit: the task is broken.
var errTestPatch = errors.New("the test patch does not apply to the base commit")

// combine applies the model's patch and then the test patch to base in dir's repository, on
// the host, in a throwaway index and object directory (as patch.ApplyToBase applies the
// model's patch), and returns their sum as one diff against base. Where both touch a file the
// test patch wins: that file is reset to base before the test patch applies.
func combine(ctx context.Context, dir, base string, model, tests []byte) ([]byte, error) {
	git := patch.HostGit(dir)
	sc, err := patch.NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	env := append(sc.Env, "GIT_LITERAL_PATHSPECS=1")
	if len(model) > 0 {
		if _, err := git(ctx, env, model, "apply", "--cached", "--binary", "--whitespace=nowarn", "-"); err != nil {
			return nil, fmt.Errorf("applying the model's patch: %w", err)
		}
	}
	paths, err := touched(ctx, git, env, tests)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errTestPatch, err)
	}
	if len(model) > 0 && len(paths) > 0 {
		if _, err := git(ctx, env, nil, append([]string{"reset", "--quiet", base, "--"}, paths...)...); err != nil {
			return nil, fmt.Errorf("resetting the test patch's files: %w", err)
		}
	}
	if _, err := git(ctx, env, tests, "apply", "--cached", "--binary", "--whitespace=nowarn", "-"); err != nil {
		return nil, fmt.Errorf("%w: %v", errTestPatch, err)
	}
	tree, err := git(ctx, env, nil, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("writing the combined tree: %w", err)
	}
	return git(ctx, env, nil, "diff", "--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
		"--src-prefix=a/", "--dst-prefix=b/", base, strings.TrimSpace(string(tree)))
}

// touched lists every path a patch changes, both sides of a rename.
func touched(ctx context.Context, git patch.Git, env []string, diff []byte) ([]string, error) {
	out, err := git(ctx, env, diff, "apply", "--numstat", "-z", "-")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range bytes.Split(out, []byte{0}) {
		s := string(f)
		if i := strings.LastIndexByte(s, '\t'); i >= 0 {
			s = s[i+1:]
		}
		if s != "" {
			paths = append(paths, s)
		}
	}
	return paths, nil
}
