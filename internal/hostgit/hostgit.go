// Package hostgit owns the one rule every git that frognano runs on the host follows. git
// runs with no system or global configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null,
// HOME and XDG_CONFIG_HOME pointing nowhere, so no ~/.gitconfig, ~/.config/git/attributes or
// ~/.netrc either), no system attributes, none of this process's variables but PATH and
// TMPDIR (so no GIT_DIR, GIT_INDEX_FILE or secret of the service reaches git), no prompt,
// C-locale messages, and with the repository's hooks, fsmonitor and attributes file off.
//
// A caller that needs more adds it on top, where a reader sees it: -c settings at the start of
// args (a local fetch's protocol.file.allow), variables appended to Cmd.Env (a throwaway
// index, an identity, githubapp's network settings and token header).
//
// hostgit never runs git over a .git a sandbox could write: its callers pass the host's own
// clone, a checkout given to `frognano run`, or a repository made from one (docs/security.md).
// The rule keeps what such a repository's own config can do small; it is not a defence for a
// .git someone else wrote.
package hostgit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/frognano/frognano/internal/clip"
)

// passEnv is all of this process's environment a host git sees: what it needs to find
// programs and a folder for temporary files.
var passEnv = []string{"PATH", "TMPDIR"}

// settings is the rule's part of git's command line.
var settings = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.attributesFile=/dev/null",
}

// MaxStderr bounds the end of git's standard error that an *Error keeps.
const MaxStderr = 4 << 10

// waitDelay is how long Wait waits for git's children (a remote helper) to let go of its
// output once git itself ended or was killed.
const waitDelay = 5 * time.Second

// Env is the environment of every host git: the variables of passEnv this process has and the
// rule's settings. A caller appends its own to it.
func Env() []string {
	var env []string
	for _, name := range passEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return append(env,
		"HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	)
}

// Command returns `git args...` to run in dir ("" for this process's folder) under the rule.
// The caller may append to its Env (never replace it), set Stdin, Stdout and Stderr, and start
// it; args may start with -c settings of its own.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, settings...), args...)...)
	cmd.Dir = dir
	cmd.Env = Env()
	cmd.WaitDelay = waitDelay
	return cmd
}

// Run runs `git args...` in dir under the rule, with env appended to its environment and stdin
// (nil: none) as its input, and returns its standard output, also when git fails. A failure is
// an *Error.
func Run(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout bytes.Buffer
	stderr := &tail{max: MaxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), newError(ctx, args, err, stderr)
	}
	return stdout.Bytes(), nil
}

// RunLimited is Run with no extra variables and no input, for output that may be large: when
// git writes more than limit bytes it is stopped, not read to its end, and the error is an
// *OutputLimitError.
func RunLimited(ctx context.Context, dir string, limit int64, args ...string) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := Command(ctx, dir, args...)
	stderr := &tail{max: MaxStderr}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, newError(ctx, args, err, stderr)
	}
	b, readErr := io.ReadAll(io.LimitReader(out, limit+1))
	if int64(len(b)) > limit {
		cancel()
		_ = cmd.Wait()
		return nil, &OutputLimitError{Cmd: subcommand(args), Limit: limit}
	}
	if err := cmd.Wait(); err != nil {
		return nil, newError(ctx, args, err, stderr)
	}
	return b, readErr
}

// Error is a git that failed: its subcommand, how it ended (an *exec.ExitError, a failure to
// start, with the context's error joined when that is what stopped it) and the end of its
// standard error, at most MaxStderr bytes, trimmed.
type Error struct {
	Cmd    string
	Err    error
	Stderr string
}

func (e *Error) Error() string { return fmt.Sprintf("git %s: %v: %s", e.Cmd, e.Err, e.Stderr) }
func (e *Error) Unwrap() error { return e.Err }

func newError(ctx context.Context, args []string, err error, stderr *tail) *Error {
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return &Error{Cmd: subcommand(args), Err: err, Stderr: stderr.String()}
}

// OutputLimitError is a git whose output was over the limit RunLimited was given.
type OutputLimitError struct {
	Cmd   string
	Limit int64
}

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("git %s gives more than %d bytes", e.Cmd, e.Limit)
}

// subcommand is the first of args that is not an option of git's own (-c and -C take the
// next argument with them).
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// tail keeps the end of what is written to it: enough for String's last max bytes (and at
// most about twice that meanwhile).
type tail struct {
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if keep := t.max + utf8.UTFMax; len(t.b) > 2*keep {
		// utf8.UTFMax more: clip.Suffix must see where the character at its cut starts.
		t.b = append(t.b[:0], t.b[len(t.b)-keep:]...)
	}
	return len(p), nil
}

// String is what was kept, cut at a character, without surrounding white space.
func (t *tail) String() string { return strings.TrimSpace(clip.Suffix(string(t.b), t.max)) }
