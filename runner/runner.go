// Package runner owns one agent run end to end: it copies a host checkout into an offline,
// unprivileged sandbox, drives FrogNano through the Leaf loop with the tools executing in that
// sandbox, takes the patch out as untrusted data, and runs the repository's tests before and
// after in fresh sandboxes. The checks of check/ run on the patch through runner/audit, and
// the Result holds what they found; the text people read of a Result is package report's,
// which imports runner: runner never renders it.
//
// runner never holds a GitHub token and never talks to GitHub: the checkout it receives is
// already on disk, and publishing is the caller's job. It never runs git over a .git the
// sandbox could write; the only git it runs on the host is a read of the host checkout's HEAD.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/hostgit"
	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
	"github.com/frognano/frognano/runner/verify"
)

// Defaults for a run; the command line and the service override them.
const (
	DefaultTestTimeout = 10 * time.Minute
	// maxTestOutputBytes bounds one test run's captured output.
	maxTestOutputBytes = 16 << 20
)

// Config is everything a run needs besides the task and the checkout.
type Config struct {
	Sandbox sandbox.Config
	Leaf    leaf.Config
	// Models are the operator's named model servers; nil for a local run, which uses Leaf.
	// The default one's URL, served model and key are Leaf's (New copies them, so the flags
	// that set Leaf set it too). The service chooses one per run (Spec.Model).
	Models               *Models
	TestCmd              string        // "" detects it from the checkout; "none" runs no tests
	TestTimeout          time.Duration // each of the two test runs
	AllowWorkflowChanges bool
	MaxPatchBytes        int64 // the patch size limit; 0 means patch.DefaultMaxBytes
	// Env configures the repository's setup script and the cache of environment images
	// (runner/env): the agent and both test runs start from the repository's environment.
	Env env.Config
	// Images maps repositories to base sandbox images (FROGNANO_SANDBOX_IMAGES); a run whose
	// Spec.Repo matches no rule, or has none (`frognano run`), uses Sandbox.Image.
	Images env.ImageMap
	// Attempts configures RunAll: how many attempts each run makes (FROGNANO_ATTEMPTS), the
	// process-wide model and sandbox limits they share (attempts.go).
	Attempts AttemptOptions
	// SecretValues returns the values that must never be published (the one redactor's
	// registry: githubapp.SecretMatcher, which knows the tokens and the operator's setup
	// values). Every file the patch publishes is read whole, as bytes, and one that holds any
	// form of one (as is, base64, hex, URL-encoded, as JSON spells it) refuses the patch
	// before its tests, like an unsafe one (patch.Options.Values): a file cannot be redacted.
	// nil: no patch is refused for it.
	SecretValues func() *secretform.Matcher
	// Secrets is what a finding of check/secrets (gitleaks' default rules over every line the
	// patch adds) does (FROGNANO_SECRETS): secrets.Block, the default ("" too), refuses the
	// patch before its tests, as is a patch that could not be scanned; secrets.Warn keeps it
	// and notes the findings. Findings are named by rule, file and line, never by value.
	Secrets secrets.Mode
	// Scanners are the operator's own scanners (FROGNANO_SCANNERS, check/scanner), run one
	// by one after the tests, each in a fresh sandbox of the run's environment with the patch
	// applied (runner/audit); nil runs none. ScannerTimeout bounds each (0:
	// scanner.DefaultTimeout); a finding at or above ScannerFailLevel on a line the patch
	// added or changed fails the check run ("": scanner.DefaultFailLevel).
	Scanners         []scanner.Scanner
	ScannerTimeout   time.Duration
	ScannerFailLevel scanner.FailLevel
	// OSVDir is the operator's offline copy of OSV's per-ecosystem exports
	// (FROGNANO_OSV_DIR: DIR/<Ecosystem>/all.zip): the versions a patch adds to its
	// dependencies are checked against it (check/deps). "": they are only listed, and the
	// report says that no vulnerability data was configured. A known vulnerability never
	// refuses the patch.
	OSVDir string
}

// DefaultConfig returns the defaults the issue and docs/leaf-protocol.md name.
func DefaultConfig() Config {
	return Config{
		Sandbox:       sandbox.DefaultConfig(),
		Leaf:          leaf.DefaultConfig(),
		TestTimeout:   DefaultTestTimeout,
		MaxPatchBytes: patch.DefaultMaxBytes,
		Secrets:       secrets.DefaultMode,
		// Scanners: none until the operator names some.
		ScannerTimeout:   scanner.DefaultTimeout,
		ScannerFailLevel: scanner.DefaultFailLevel,
	}
}

// Spec names one run.
type Spec struct {
	RunID      string // labels the sandboxes and names the trajectory
	InstanceID string // free-form, e.g. "owner/repo#12"; defaults to the repository folder name
	RepoDir    string // host checkout; read, never modified
	Task       string // the user message given to the model
	// Repo is "owner/name": it picks the base image from Config.Images. Empty for a local run.
	Repo string
	// Image, when set, is the base image of this run's sandboxes, over Config.Images and
	// Sandbox.Image: a `frognano eval` task names its own.
	Image string
	// Scope is whose environment the run's setup builds (env.ServiceScope in the service);
	// empty: the checkout's own (env.LocalScope), as for `frognano run`. Runs of one scope
	// never share an environment with another's.
	Scope env.Scope
	// SetupCommit is the commit of RepoDir whose .frognano/setup.sh (and its inputs) builds
	// the environment; empty: the checkout's HEAD. A follow-up run on a pull request's branch
	// sets its base branch's head, so that nothing a model committed ever runs with network.
	SetupCommit string
	// Observer, when set, is told what the run does as it goes: setup's lines, waits for the
	// model server and for sandboxes, the start of each test run (observer.go).
	Observer Observer
	// Model, when set, is the named model server the run uses (its URL, served model, key and
	// concurrency) instead of Config.Leaf's and Config.Attempts.ModelLimiter.
	Model *ModelServer
	// Attempts, when above 0 and below the runner's own (Runner.Attempts, the operator's
	// ceiling), is how many attempts RunAll makes: the requester asked for fewer. More than
	// the ceiling is the ceiling.
	Attempts int

	// attempt is set when the run is one attempt of RunAttempts: its own model settings and
	// the before-run it shares with the other attempts (attempts.go).
	attempt *attemptSpec
}

// Runner runs agents. It is safe for concurrent use by several runs.
type Runner struct {
	docker *client.Client
	cfg    Config
	envs   *env.Manager
	log    *slog.Logger
}

// New returns a Runner using the given Docker client.
func New(docker *client.Client, cfg Config, log *slog.Logger) *Runner {
	if cfg.TestTimeout <= 0 {
		cfg.TestTimeout = DefaultTestTimeout
	}
	if cfg.MaxPatchBytes <= 0 {
		cfg.MaxPatchBytes = patch.DefaultMaxBytes
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Leaf.Logger == nil {
		cfg.Leaf.Logger = log
	}
	cfg.Models = cfg.Models.withDefault(cfg.Leaf)
	if cfg.ScannerTimeout <= 0 {
		cfg.ScannerTimeout = scanner.DefaultTimeout
	}
	if cfg.Sandbox.Lifetime == 0 {
		longest := cfg.TestTimeout // one test run, or one scanner when there are scanners
		if len(cfg.Scanners) > 0 {
			longest = max(longest, cfg.ScannerTimeout)
		}
		cfg.Sandbox.Lifetime = SandboxLifetime(cfg.Leaf.MaxTime, longest)
	}
	return &Runner{docker: docker, cfg: cfg, envs: env.New(docker, cfg.Env, log), log: log}
}

// SetupError is a broken setup (no repository, no image, no tool executor): the run could not
// start at all, and retrying without a fix will not help.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// InfraError is a failure of the machinery (Docker broke, the sandbox died) rather than of
// the agent. Run returns it marked transient (fault.IsTransient holds): a later retry may
// succeed.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// TestRun is one run of the repository's tests in a fresh sandbox.
type TestRun struct {
	verify.Outcome
	PatchApplied bool   // after-run only: the patch applied cleanly
	Error        string // the run could not be carried out (sandbox error, patch did not apply)
}

// runTests runs the test command on a fresh copy of the untouched checkout (repo, packed once
// for the run), with the patch applied when one is given: exactly what would be published, so
// nothing the agent did to its own environment can sway the result.
func (r *Runner) runTests(ctx context.Context, sbCfg sandbox.Config, repo *sandbox.Snapshot, spec Spec, purpose, testCmd string, diff []byte) *TestRun {
	plan := verify.PlanFor(testCmd)
	tr := &TestRun{Outcome: verify.Outcome{Command: plan.Display, ExitCode: -1}}
	fail := func(what string, err error) *TestRun {
		tr.Error = fmt.Sprintf("%s: %v", what, err)
		return tr
	}
	sb, err := sandbox.NewFrom(ctx, r.docker, sbCfg, repo, spec.RunID, purpose)
	if err != nil {
		return fail("creating the test sandbox", err)
	}
	defer sb.Close()
	spec.observer().TestsStart(spec.attempt.number(), diff != nil)
	if diff != nil {
		if err := applyPatch(ctx, sb, diff); err != nil {
			return fail("applying the patch", err)
		}
		tr.PatchApplied = true
	}
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", plan.Shell}, nil, r.cfg.TestTimeout, maxTestOutputBytes)
	if why := sb.StopReason(context.WithoutCancel(ctx)); why != "" {
		return fail("running the tests", errors.New(why))
	}
	if err != nil {
		return fail("running the tests", err)
	}
	var report []byte
	if plan.ReportFile != "" {
		rep, err := sb.Exec(ctx, []string{"cat", plan.ReportFile}, nil, time.Minute, maxTestOutputBytes)
		if err == nil && rep.ExitCode == 0 {
			report = rep.Stdout
		}
	}
	out := append(append([]byte{}, res.Stdout...), res.Stderr...)
	tr.Outcome = verify.Read(plan, res.ExitCode, out, report)
	tr.Outcome.Duration = res.Duration
	tr.Outcome.TimedOut = res.TimedOut
	return tr
}

// applyPatch applies diff to the untouched checkout in a fresh sandbox: what the tests after
// and the operator's scanners run on.
func applyPatch(ctx context.Context, sb *sandbox.Sandbox, diff []byte) error {
	res, err := sb.Exec(ctx, []string{"git", "-c", "core.hooksPath=/dev/null", "apply", "--whitespace=nowarn", "-"},
		strings.NewReader(string(diff)), 2*time.Minute, 1<<20)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("git apply exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// takeDiff takes the agent's changes out of the sandbox as `git diff --binary` against the
// starting commit. First it ends every process the model left (Sandbox.Quiesce); then git runs
// with a configuration the model cannot set: .git/config is replaced by a fresh one (no
// filters, drivers, hooks, fsmonitor or attributes file), .git/info/attributes is removed, and
// so are .git/commondir and .git/config.worktree (the common directory is pinned to .git),
// system and user configuration are ignored, the index is a fresh one read from the base, and
// renames are off so every path carries its mode. The output is still untrusted data: the host
// checks it against its own clone (patch.ApplyToBase) whatever it says.
func takeDiff(ctx context.Context, sb *sandbox.Sandbox, base string) ([]byte, error) {
	version, format := "0", ""
	if len(base) == 64 {
		version, format = "1", "[extensions]\n\tobjectformat = sha256\n"
	}
	if err := sb.Quiesce(ctx); err != nil {
		return nil, err
	}
	script := `set -e
[ -d .git ] && [ ! -L .git ] || { echo ".git is not a directory" >&2; exit 91; }
rm -f .git/config .git/info/attributes .git/commondir .git/gitdir .git/config.worktree
printf '[core]\n\trepositoryformatversion = ` + version + `\n\tbare = false\n` + format + `' > .git/config
mkdir -p .git/info
printf '%s\n' ` + shellQuoteAll(patch.ExcludePatterns()) + ` >> .git/info/exclude
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_ATTR_NOSYSTEM=1 HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent
export GIT_DIR="$PWD/.git" GIT_COMMON_DIR="$PWD/.git" GIT_WORK_TREE="$PWD" GIT_INDEX_FILE=/tmp/frognano-diff-index
rm -f "$GIT_INDEX_FILE"
g() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.attributesFile=/dev/null "$@"; }
g read-tree ` + base + `
g add -A
g diff --cached --binary --no-color --no-ext-diff --no-textconv --no-renames --full-index --src-prefix=a/ --dst-prefix=b/ ` + base + `
rm -f "$GIT_INDEX_FILE"`
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-c", script}, nil, 2*time.Minute, patch.MaxInputBytes) // past MaxBytes the patch is only reported, but its file list still counts
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		return nil, fmt.Errorf("the diff is larger than %d MiB", patch.MaxInputBytes>>20)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("git diff exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return res.Stdout, nil
}

// setupChangeNotes warns that the patch changes what runs with network before later runs
// (the setup script, the files its environment is keyed by): it ran in this run only as the
// base commit had it, and after a merge it will run with network. Review it as CI configuration.
func setupChangeNotes(p *patch.Checked) []string {
	var out []string
	for _, f := range p.Files {
		if path := f.Path(); path == env.ScriptFile || path == env.InputsFile {
			out = append(out, "The patch changes "+path+", which runs with network before later runs once merged (in this run, setup ran the base commit's version): review it like CI configuration.")
		}
	}
	return out
}

// leftoversNote tells the reviewer that a Bash timeout left processes behind (background
// processes, or ones that escaped the command's process group, a fork bomb included) and that
// the sandbox killed them.
func leftoversNote(n int) string {
	if n == 1 {
		return "A command timed out; 1 leftover process was killed."
	}
	return fmt.Sprintf("A command timed out; %d leftover processes were killed.", n)
}

func shellQuoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// HeadCommit returns the commit checked out in dir, or an error saying dir is not a git
// checkout. It runs git on the host (internal/hostgit), so it is only ever called on a
// host-side checkout the sandbox cannot write.
func HeadCommit(ctx context.Context, dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("repository %s is not a directory", dir)
	}
	out, err := hostgit.Run(ctx, dir, nil, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("repository %s is not a git checkout with a commit (git rev-parse HEAD failed)", dir)
		}
		return "", fmt.Errorf("running git on %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func classify(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fault.Transient(&InfraError{fmt.Errorf("%s: %w", what, err)})
}
