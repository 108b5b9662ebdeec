package githubapp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/hostgit"
)

// netEnv lists the variables of our own environment a git child sees on top of what every
// host git sees (internal/hostgit: PATH, TMPDIR): what it needs to reach GitHub through a
// proxy or a private CA. Nothing else leaks in, so no secret of the service can reach git, its
// helpers or its error messages.
var netEnv = []string{
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO",
}

// gitRun is one git invocation on the host.
type gitRun struct {
	dir   string
	args  []string
	stdin []byte
	env   []string // extra KEY=VALUE
	token string   // when set, sent as an Authorization header to the configured git host only
}

// git runs git under the rule of every host git (internal/hostgit: no system or global
// configuration, hooks, fsmonitor or prompt) with, on top of it, what talking to GitHub
// needs: no credential helper or askpass, only the configured host's scheme, no redirects,
// this process's proxy and CA settings, and the token (if any) as an
// http.<git host>.extraHeader in the child's environment: never in argv, a URL or a file. It
// returns the trimmed standard output; a failure is a *gitError.
func (c *Client) git(ctx context.Context, r gitRun) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.GitTimeout)
	defer cancel()
	gitURL, err := url.Parse(c.app.endpoints.Git)
	if err != nil {
		return "", fmt.Errorf("parsing git URL: %w", err)
	}
	config := [][2]string{
		{"credential.helper", ""},
		{"protocol.allow", "never"},
		{"protocol." + gitURL.Scheme + ".allow", "always"},
		{"http.followRedirects", "false"},
		{"init.defaultBranch", "main"},
	}
	if r.token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + r.token))
		RegisterSecret(basic)
		config = append(config, [2]string{"http." + c.app.endpoints.Git + ".extraHeader", "Authorization: Basic " + basic})
	}
	env := []string{
		"GIT_ASKPASS=", "SSH_ASKPASS=", "GCM_INTERACTIVE=never", "GIT_PROTOCOL_FROM_USER=0",
		"GIT_CONFIG_COUNT=" + strconv.Itoa(len(config)),
	}
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	for _, name := range netEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	out, err := hostgit.Run(ctx, r.dir, append(env, r.env...), r.stdin, r.args...)
	if err != nil {
		var he *hostgit.Error
		if !errors.As(err, &he) {
			return "", err
		}
		return "", &gitError{cmd: he.Cmd, err: he.Err, stderr: strings.TrimSpace(Redact(he.Stderr))}
	}
	return strings.TrimSpace(string(out)), nil
}

// gitError is a git invocation that failed, with the end of its stderr (redacted): where
// GitHub's git server says why it refused (a clone of a branch that is gone).
type gitError struct {
	cmd    string
	err    error
	stderr string
}

func (e *gitError) Error() string { return fmt.Sprintf("git %s: %v: %s", e.cmd, e.err, e.stderr) }
func (e *gitError) Unwrap() error { return e.err }

// gitStderr is the stderr of the git invocation err comes from, or "".
func gitStderr(err error) string {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.stderr
	}
	return ""
}

// remote is the clone URL of the Client's repository on the configured host, without credentials.
func (c *Client) remote() string {
	return c.app.endpoints.Git + url.PathEscape(c.owner) + "/" + url.PathEscape(c.repo) + ".git"
}

// Clone clones the repository's default branch into dir (which must not exist or be empty) on the
// host, with a fresh installation token that git gets through its environment only. It returns the
// commit checked out and the branch's name. It fails if the token ended up in .git/config.
func (c *Client) Clone(ctx context.Context, dir string) (headSHA, defaultBranch string, err error) {
	return c.clone(ctx, dir, "")
}

// CloneBranch is Clone of branch (a pull request's head) instead of the default branch, with
// baseBranch fetched too. It returns the head commits of both: the environment of a follow-up
// run is built from the base branch's, never from the pull request's.
func (c *Client) CloneBranch(ctx context.Context, dir, branch, baseBranch string) (headSHA, baseSHA string, err error) {
	if !ValidBranch(branch) || !ValidBranch(baseBranch) {
		return "", "", fault.Permanent(fmt.Errorf("cloning %s/%s: branch %q or %q is not a valid branch name", c.owner, c.repo, branch, baseBranch))
	}
	if headSHA, _, err = c.clone(ctx, dir, branch); err != nil {
		// git's own words (LC_ALL=C): the branch is not on GitHub, which no retry changes.
		if strings.Contains(gitStderr(err), "Remote branch "+branch+" not found") {
			return "", "", fault.Permanent(&BranchGoneError{Branch: branch, err: err})
		}
		return "", "", err
	}
	tok, err := c.token(ctx)
	if err != nil {
		return "", "", mark(fmt.Errorf("fetching %s of %s/%s: %w", baseBranch, c.owner, c.repo, err))
	}
	if _, err := c.git(ctx, gitRun{dir: dir, token: tok,
		args: []string{"fetch", "--no-tags", "--quiet", "--", c.remote(), "+refs/heads/" + baseBranch + ":refs/remotes/origin/" + baseBranch}}); err != nil {
		return "", "", fault.Transient(fmt.Errorf("fetching %s of %s/%s: %w", baseBranch, c.owner, c.repo, err))
	}
	if baseSHA, err = c.git(ctx, gitRun{dir: dir, args: []string{"rev-parse", "--verify", "refs/remotes/origin/" + baseBranch + "^{commit}"}}); err != nil {
		return "", "", fmt.Errorf("reading %s's head: %w", baseBranch, err)
	}
	return headSHA, baseSHA, nil
}

func (c *Client) clone(ctx context.Context, dir, branch string) (headSHA, defaultBranch string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("cloning %s/%s: %w", c.owner, c.repo, err)
	}
	tok, err := c.token(ctx)
	if err != nil {
		return "", "", mark(fmt.Errorf("cloning %s/%s: %w", c.owner, c.repo, err))
	}
	start := time.Now()
	if _, err := c.git(ctx, gitRun{
		args:  cloneArgs(branch, c.remote(), dir),
		token: tok,
	}); err != nil {
		return "", "", fault.Transient(fmt.Errorf("cloning %s/%s: %w", c.owner, c.repo, err))
	}
	if headSHA, err = c.git(ctx, gitRun{dir: dir, args: []string{"rev-parse", "--verify", "HEAD^{commit}"}}); err != nil {
		return "", "", fmt.Errorf("reading cloned HEAD: %w", err)
	}
	if defaultBranch, err = c.git(ctx, gitRun{dir: dir, args: []string{"symbolic-ref", "--short", "HEAD"}}); err != nil {
		return "", "", fmt.Errorf("reading cloned branch: %w", err)
	}
	if err := checkNoToken(filepath.Join(dir, ".git", "config"), tok); err != nil {
		return "", "", err
	}
	c.log.InfoContext(ctx, "cloned repository", "head", headSHA, "branch", defaultBranch, "elapsed", time.Since(start))
	return headSHA, defaultBranch, nil
}

func cloneArgs(branch, remote, dir string) []string {
	args := []string{"clone", "--no-tags", "--single-branch", "--quiet"}
	if branch != "" {
		args = append(args, "--branch", branch)
	}
	return append(args, "--", remote, dir)
}

// checkNoToken is a tripwire: if a future change (or a git version) ever persisted the token,
// the run stops before the clone is copied anywhere.
func checkNoToken(path, tok string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checking %s for credentials: %w", path, err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	if bytes.Contains(data, []byte(tok)) || bytes.Contains(data, []byte(basic)) {
		return errors.New("checking git config for credentials: the installation token was written to .git/config")
	}
	return nil
}
