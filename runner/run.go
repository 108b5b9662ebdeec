package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
	"github.com/frognano/frognano/runner/verify"
)

// Run performs one run. It returns a Result whenever the agent loop ran, whatever the agent
// achieved (the exit reason says how it ended); an error means the run could not be carried
// out (a *SetupError, an *InfraError, or the context's error when cancelled before the loop).
// Every sandbox it creates is removed before it returns, on every path. It logs through the
// logger ctx carries (internal/logging), else the Runner's, naming the run as sandbox_run.
//
// A run has four phases, each a method of run below: prepare (the checkout's settings, its
// pack, the environment), agent (the Leaf loop in its sandbox, with the tests before running
// beside it), verify (the patch taken out and checked, the tests after, the comparison) and
// finish.
func (r *Runner) Run(ctx context.Context, spec Spec, onStep func(leaf.Step)) (*Result, error) {
	x := &run{r: r, spec: spec, start: time.Now()}
	defer x.close()
	ctx = x.identify(ctx)
	if ended, err := x.prepare(ctx); err != nil {
		return nil, err
	} else if ended { // setup failed: no loop, no tests
		x.res.Elapsed = time.Since(x.start)
		return x.res, nil
	}
	sb, err := x.agent(ctx, onStep)
	if err != nil {
		return nil, err
	}
	if x.res.Cancelled {
		x.reportEgress(ctx, nil)
		return x.finish(ctx), nil
	}
	x.verify(ctx, sb)
	return x.finish(ctx), nil
}

// run is one Run under way: what its phases hand each other.
type run struct {
	r     *Runner
	spec  Spec
	log   *slog.Logger
	start time.Time

	base    string // the checkout's HEAD
	testCmd string // "" runs no tests
	task    string // the user message, with the repository's instructions
	res     *Result

	repo  *sandbox.Snapshot // the checkout, packed once for every sandbox of the run
	sbCfg sandbox.Config    // the run's sandboxes: its environment's image and limits

	// The tests before run beside the agent; testsBefore is theirs, written by their goroutine
	// (res is not returned when Run fails).
	before      sync.WaitGroup
	testsBefore *TestRun

	cleanups []func() // undone by close, last first

	network sandbox.NetworkReport // what the agent's sandbox observed (offline.go)

	// added is what the kept patch adds, line by line, as git on the host sees it
	// (audit.Auditor.Added); nil when it could not be read or there is no patch.
	added []scanner.Added
}

func (x *run) defer_(f func()) { x.cleanups = append(x.cleanups, f) }

// close waits for the tests before and frees what the phases took, on every path.
func (x *run) close() {
	x.before.Wait()
	for i := len(x.cleanups) - 1; i >= 0; i-- {
		x.cleanups[i]()
	}
}

// identify names the run (its sandbox id and instance, made up for a local run) and makes its
// logger: the one ctx carries (the caller's, naming the run as the database does) or else the
// runner's, with the run's id as sandbox_run (never run_id: see internal/logging). The
// returned context carries that logger to env and leaf.
func (x *run) identify(ctx context.Context) context.Context {
	spec := &x.spec
	if spec.RunID == "" {
		spec.RunID = fmt.Sprintf("local-%d", x.start.UnixNano())
	}
	if spec.InstanceID == "" {
		spec.InstanceID = filepath.Base(spec.RepoDir)
	}
	x.log = logging.FromContextOr(ctx, x.r.log).With(logging.SandboxRun(spec.RunID))
	return logging.WithLogger(ctx, x.log)
}

// prepare reads the checkout's settings, starts packing it and prepares the environment. It
// reports ended when the repository's setup failed: the run ends there, before any model call.
func (x *run) prepare(ctx context.Context) (ended bool, err error) {
	r, spec := x.r, &x.spec
	if x.base, err = HeadCommit(ctx, spec.RepoDir); err != nil {
		return false, &SetupError{err}
	}
	if err := x.settings(ctx); err != nil {
		return false, err
	}

	// The checkout is packed once for every sandbox of the run (the agent's, both test runs),
	// in the background while the environment is prepared and the agent's sandbox is made.
	// The attempts of a run share one pack (attempts.go).
	repo, closeRepo, err := spec.attempt.snapshot(func(ctx context.Context) (*sandbox.Snapshot, error) {
		return sandbox.Pack(ctx, spec.RepoDir, r.cfg.Sandbox.User, "")
	}, ctx)
	if err != nil {
		return false, classify("packing the repository", err)
	}
	x.repo = repo
	x.defer_(closeRepo)
	return x.environment(ctx)
}

// settings reads the repository's own settings (a broken one is reported and ignored, never
// half-used) and makes the Result. They come from the setup commit when it is not the
// checkout's: a follow-up's branch holds an earlier model's work, which must not pick its test
// command or write its instructions.
func (x *run) settings(ctx context.Context) error {
	r, spec := x.r, x.spec
	settingsDir := spec.RepoDir
	if spec.SetupCommit != "" && spec.SetupCommit != x.base {
		view, done, err := settingsView(ctx, spec.RepoDir, spec.SetupCommit)
		if err != nil {
			return &SetupError{err}
		}
		x.defer_(done)
		settingsDir = view
	}
	repoCfg, cfgErr := LoadRepoConfig(settingsDir)
	x.testCmd = cmp.Or(r.cfg.TestCmd, repoCfg.TestCommand)
	if x.testCmd == "" {
		x.testCmd = verify.Detect(settingsDir)
	}
	if x.testCmd == "none" {
		x.testCmd = ""
	}
	x.task = withInstructions(spec.Task, repoCfg)
	x.res = &Result{
		RunID: spec.RunID, InstanceID: spec.InstanceID, Task: x.task, BaseCommit: x.base,
		Model: spec.attempt.leafConfig(r.cfg.Leaf, spec).Model, ModelName: spec.modelName(), TestCommand: x.testCmd, StartedAt: x.start, MaxPatchBytes: r.cfg.MaxPatchBytes,
	}
	if cfgErr != nil {
		x.note("The repository's frognano settings were ignored: " + cfgErr.Error())
	}
	if settingsDir != spec.RepoDir {
		earlier, err := audit.EarlierTestInfluences(ctx, spec.RepoDir, spec.SetupCommit, x.base)
		if err != nil {
			x.note("The earlier commits on this pull request could not be checked for changes to tests or test settings: " + err.Error())
		}
		x.res.EarlierTestInfluences = earlier
	}
	if note := agentsCutNote(repoCfg); note != "" {
		x.note(note)
	}
	return nil
}

// environment prepares the run's image: the operator's image for this repository, plus what
// the repository's setup script installed (with network, before any model call). A failed
// setup ends the run (ended); the model is never called.
func (x *run) environment(ctx context.Context) (ended bool, err error) {
	r, spec := x.r, x.spec
	baseImage := cmp.Or(spec.Image, r.cfg.Images.For(spec.Repo, r.cfg.Sandbox.Image))
	x.sbCfg = r.cfg.Sandbox
	x.sbCfg.Image = baseImage
	x.sbCfg.Usage = &sandbox.Usage{} // this attempt's sandboxes (Result.Usage)
	x.res.SandboxUsage = x.sbCfg.Usage
	if spec.Observer != nil {
		o, k := spec.Observer, spec.attempt.number()
		x.sbCfg.OnSlotWait = func(w sandbox.SlotWait) { o.SandboxWait(k, w) }
	}
	scope := spec.Scope
	if scope.Repo == "" {
		if scope, err = env.LocalScope(spec.RepoDir); err != nil {
			return false, &SetupError{err}
		}
	}
	environment, err := r.envs.Prepare(ctx, env.Request{
		RunID: spec.RunID, RepoDir: spec.RepoDir, Commit: cmp.Or(spec.SetupCommit, x.base), Repo: spec.Repo, Scope: scope,
		Sandbox: x.sbCfg, Progress: spec.observer().SetupLine,
	})
	var setupErr *env.SetupError
	var missing *env.MissingImageError
	switch {
	case errors.As(err, &setupErr):
		x.log.Info("setup failed; the run ends before the model is called", "reason", setupErr.Reason)
		x.res.Environment, x.res.SetupFailed = setupErr.Env, setupErr.Reason
		if setupErr.Unsealed != nil {
			x.res.Refused = EnvironmentRefusal(setupErr.Unsealed)
		}
		return true, nil
	case errors.As(err, &missing):
		return false, &SetupError{err}
	case err != nil:
		return false, classify("preparing the environment", err)
	}
	x.defer_(func() {
		if err := environment.Release(); err != nil {
			x.log.Warn("releasing the environment", logging.Err(err))
		}
	})
	x.res.Environment = environment
	x.sbCfg.Image, x.sbCfg.BaseImage = environment.Image, baseImage
	return false, nil
}

// agent runs the Leaf loop in the agent's sandbox, made while the model writes its first turn
// (agentBox), with the tests before running beside it. It returns the agent's sandbox, its
// processes still there for the diff; the run is marked cancelled when the loop was.
func (x *run) agent(ctx context.Context, onStep func(leaf.Step)) (*sandbox.Sandbox, error) {
	r, spec, res := x.r, x.spec, x.res
	loopCtx, cancelLoop := context.WithCancel(ctx)
	x.defer_(cancelLoop)
	box := startAgentBox(ctx, func(ctx context.Context) (*sandbox.Sandbox, error) {
		return sandbox.NewFrom(ctx, r.docker, x.sbCfg, x.repo, spec.RunID, "agent")
	}, cancelLoop)
	x.defer_(func() { box.Close() })
	x.startTestsBefore(ctx, box)

	x.log.Info("agent loop starting", "model", x.res.Model, "test_cmd", x.testCmd)
	res.Leaf = leaf.Run(loopCtx, spec.attempt.leafConfig(r.cfg.Leaf, spec), x.task, box, redactingSteps(onStep))
	redactLoopResult(res.Leaf)
	sb, err := box.wait()
	if err != nil {
		return nil, err
	}
	// OOM kills are told by OOMKillsNote below, with their number; a tool error says itself
	// what ended the executor (sandbox.brokenError). A note of "the sandbox" being killed
	// here would claim it for any tool error after any OOM kill (a stopped executor, one
	// killed by a command).
	if n := sb.LeftoversKilled(); n > 0 {
		x.note(leftoversNote(n))
	}
	if note := sb.OOMKillsNote(context.WithoutCancel(ctx)); note != "" {
		x.note(note)
	}
	if why := sb.StopReason(context.WithoutCancel(ctx)); why != "" {
		x.note(why)
	}
	x.network = sb.NetworkReport(context.WithoutCancel(ctx)) // before Quiesce ends the observer
	if res.Leaf.ExitReason == leaf.ExitCancelled || ctx.Err() != nil {
		res.Cancelled = true
	}
	return sb, nil
}

// startTestsBefore runs the baseline on the untouched checkout while the agent works; the model
// never sees it. It starts once the agent's sandbox is made, which comes first when sandboxes
// are few (FROGNANO_MAX_SANDBOXES): the agent's work is what the run waits for, the before-run
// only has to be done by the comparison.
func (x *run) startTestsBefore(ctx context.Context, box *agentBox) {
	if x.testCmd == "" {
		return
	}
	x.before.Add(1)
	go func() {
		defer x.before.Done()
		if _, err := box.wait(); err != nil {
			return
		}
		x.testsBefore = x.spec.attempt.testsBefore(func(ctx context.Context) *TestRun {
			return x.r.runTests(ctx, x.sbCfg, x.repo, x.spec, "tests-before", x.testCmd, nil)
		}, ctx)
	}()
}

// verify takes the patch out of the agent's sandbox as untrusted data, checks it, frees the
// sandbox, and runs the tests with the patch applied in a fresh one.
func (x *run) verify(ctx context.Context, sb *sandbox.Sandbox) {
	r, res := x.r, x.res
	raw, err := takeDiff(ctx, sb, x.base)
	x.reportEgress(ctx, sb) // after takeDiff's Quiesce: no process of the model is left
	sb.Close()              // the agent's sandbox has served its purpose; free its memory for the tests
	if err != nil {
		x.note("The patch could not be taken out of the sandbox: " + err.Error())
		res.PatchLost = NoPatchNotTaken
	} else {
		res.RawPatchBytes = int64(len(raw))
		x.checkPatch(ctx, raw)
	}

	// The after-run does not wait for the before-run (shared by the attempts, it may still run
	// on a busy host): only their comparison does. The agent's sandbox is gone, so a run still
	// holds two sandboxes at most.
	if x.testCmd != "" && res.Patch != nil && len(res.Patch.Diff) > 0 {
		var note string
		res.TestsAfter, note = x.spec.attempt.testsAfter(res.Patch.Diff, func() *TestRun {
			return r.runTests(ctx, x.sbCfg, x.repo, x.spec, "tests-after", x.testCmd, res.Patch.Diff)
		})
		if note != "" {
			x.note(note)
		}
		if res.TestsAfter != nil {
			x.audit().Installed(ctx, res.Dependencies)
		}
	}
	x.scan(ctx) // the operator's scanners, after the tests after
	x.before.Wait()
	res.TestsBefore = x.testsBefore
	if res.TestsBefore != nil && res.TestsAfter != nil {
		c := verify.Compare(res.TestsBefore.Outcome, res.TestsAfter.Outcome)
		res.Comparison = &c
	}
}

// checkPatch keeps raw as the run's patch when it passes every check: sanitized, applied by git
// to the base on the host (the diff text may be entirely attacker-chosen: what counts is the
// tree git builds from it on the host's own clone), no published file holding a secret of
// frognano's in any form (read whole, as bytes: Config.SecretValues) and, under
// FROGNANO_SECRETS=block, nothing gitleaks' rules take for a secret (check/secrets).
func (x *run) checkPatch(ctx context.Context, raw []byte) {
	r := x.r
	opt := patch.Options{AllowWorkflowChanges: r.cfg.AllowWorkflowChanges, MaxBytes: r.cfg.MaxPatchBytes}
	if r.cfg.SecretValues != nil {
		opt.Values = r.cfg.SecretValues()
	}
	p, err := patch.Sanitize(raw, opt)
	if err == nil && len(p.Diff) > 0 {
		// The tree git builds is checked, and with opt.Values every file it publishes is read
		// whole for the values frognano keeps secret (a *patch.ValueError).
		_, err = patch.ApplyToBase(ctx, patch.HostGit(x.spec.RepoDir), x.base, p.Diff, opt)
	}
	if err == nil {
		x.res.SecretFindings, x.res.SecretsAllowed, err = x.audit().Secrets(ctx, p, r.cfg.Secrets)
	}
	var se *audit.SecretsError
	switch {
	case errors.As(err, &se):
		// The report's Secrets section says it, with the findings as a table; a note would
		// repeat them as escaped prose.
		x.res.PatchLost = NoPatchRefused
		return
	case err != nil:
		// The report says it as a sentence and a list (Result.Refused), not as an error chain;
		// the log keeps the chain.
		x.log.Info("the patch was refused", logging.Err(err))
		x.res.Refused = PatchRefusal(err)
		x.res.PatchLost = NoPatchRefused
		return
	}
	x.res.Patch = p
	x.res.Notes = append(x.res.Notes, setupChangeNotes(p)...)
	a := x.audit()
	x.res.Dependencies = a.Dependencies(ctx, p, r.cfg.OSVDir)
	x.added, x.res.Suppressions, x.res.SuppressionsMore = a.Added(ctx, p)
}

// scan runs the operator's scanners (Config.Scanners) on the kept patch, after the tests
// after (audit.Auditor.Scanners); none runs without a usable patch or once cancelled.
func (x *run) scan(ctx context.Context) {
	cfg, res := x.r.cfg, x.res
	diff := res.PatchBytes()
	if len(cfg.Scanners) == 0 || diff == nil || ctx.Err() != nil {
		return
	}
	res.ScannerFailLevel = cfg.ScannerFailLevel
	res.Scanners = x.audit().Scanners(ctx, cfg.Scanners, cfg.ScannerTimeout, diff, x.added)
}

// audit is what the checks of package audit know of this run: the host's clone, the base and
// the base branch's configuration commit, how to make its sandboxes, its log and its notes.
func (x *run) audit() *audit.Auditor {
	return &audit.Auditor{
		RepoDir: x.spec.RepoDir, Base: x.base, ConfigAt: cmp.Or(x.spec.SetupCommit, x.base),
		Docker: x.r.docker, Sandbox: x.sbCfg, Repo: x.repo, RunID: x.spec.RunID,
		Log: x.log, Note: x.note,
	}
}

// finish waits for the tests before and completes the Result.
func (x *run) finish(ctx context.Context) *Result {
	x.before.Wait()
	if x.res.TestsBefore == nil {
		x.res.TestsBefore = x.testsBefore
	}
	x.res.Elapsed = time.Since(x.start)
	if ctx.Err() != nil {
		x.res.Cancelled = true
	}
	return x.res
}

func (x *run) note(n string) { x.res.Notes = append(x.res.Notes, n) }
