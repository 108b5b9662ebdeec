package env

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/runner/sandbox"
)

// envReadTimeout bounds reading $FROGNANO_ENV after setup.
const envReadTimeout = 30 * time.Second

// build runs the setup script in a setup container and commits the result as env.Ref, pinned
// for the run. The caller holds the key's lock.
func (m *Manager) build(ctx context.Context, req Request, env *Environment, base image.InspectResponse, script []byte) error {
	start := time.Now()
	log := newSetupLog(m.cfg.Env, req.Progress)
	run := &SetupRun{Network: m.cfg.Network, ExitCode: -1}
	env.Setup = run
	finish := func() {
		run.Duration = time.Since(start)
		run.Log = log.Bytes()
	}
	fail := func(reason string) error {
		log.Note("setup failed: " + reason)
		finish()
		return &SetupError{Env: env, Reason: reason}
	}
	refuse := func(u *Unsealed) error {
		log.Note("environment refused: " + u.Reason())
		finish()
		return &SetupError{Env: env, Reason: u.Reason(), Unsealed: u}
	}

	cfg := req.Sandbox
	cfg.Image, cfg.BaseImage = env.BaseImage, env.BaseImage
	cfg.Lifetime = m.cfg.Timeout + lifetimeMargin
	sb, err := sandbox.NewSetup(ctx, m.docker, cfg, m.cfg.Network, m.cfg.Disk, req.RunID)
	if err != nil {
		return fmt.Errorf("creating the setup container: %w", err)
	}
	defer func() {
		// What could not be removed is the reapers' (sandbox.Prune); the operator hears of it.
		if err := sb.Close(); err != nil {
			m.runLog(ctx, req).Warn("the setup container was not removed", "err", err)
		}
	}()
	// Setup sees the setup commit from git's objects (all of it, or just the listed inputs):
	// exactly what the key covers, never a working tree a model or a local edit wrote.
	snap, err := sandbox.PackCommit(ctx, req.RepoDir, env.Inputs.Commit, cfg.User, env.Inputs.Paths())
	if err != nil {
		return fmt.Errorf("packing the setup commit: %w", err)
	}
	defer snap.Close()
	if err := sb.CopySnapshot(ctx, snap); err != nil {
		return fmt.Errorf("copying the setup commit into the setup container: %w", err)
	}
	// The script that runs is the base commit's (with only listed inputs, the tree sent lacks it).
	if err := sb.PutFile(ctx, ScriptFile, script, 0o755); err != nil {
		return fmt.Errorf("writing the setup script into the setup container: %w", err)
	}
	log.Note(fmt.Sprintf("running %s of commit %.12s on network %s (time limit %s)", ScriptFile, req.Commit, m.cfg.Network, m.cfg.Timeout))
	m.runLog(ctx, req).Info("environment setup starting", "key", env.Key, "network", m.cfg.Network)
	res, err := sb.Run(ctx, sandbox.ExecSpec{
		// A login shell, like the agent's Bash and the test runs: the image's profile applies.
		// Its stderr goes into its stdout there, so that the log keeps the order of lines.
		Argv:    []string{"/bin/bash", "-lc", `exec /bin/bash "$0" 2>&1`, ScriptFile},
		User:    sandbox.SetupUser,
		Env:     m.setupEnv(req.Commit),
		Timeout: m.cfg.Timeout,
		Output:  log,
	})
	run.ExitCode, run.TimedOut = res.ExitCode, res.TimedOut
	// Killed for its disk use (its workspace, or what it wrote outside it): that is the reason,
	// whatever the exit status says.
	if why := sb.StopReason(context.WithoutCancel(ctx)); why != "" && ctx.Err() == nil {
		return fail(why)
	}
	if err != nil {
		finish()
		if ctx.Err() != nil {
			return fmt.Errorf("running the setup script: %w", ctx.Err())
		}
		return fmt.Errorf("running the setup script: %w", err)
	}
	switch {
	case res.TimedOut:
		return fail(fmt.Sprintf("the setup script ran out of time (%s)", m.cfg.Timeout))
	case res.ExitCode != 0:
		return fail(fmt.Sprintf("the setup script exited with status %d", res.ExitCode))
	}
	exported, err := readEnvFile(ctx, sb)
	if err != nil {
		if ctx.Err() != nil {
			finish()
			return fmt.Errorf("reading $%s: %w", envFileVar, ctx.Err())
		}
		return fail(err.Error())
	}
	// Nothing the operator handed setup may stay in the environment (seal.go): checked with
	// every process setup left ended, before anything is committed.
	why, err := m.seal(ctx, sb, log, exported)
	var limit *sandbox.LimitError
	switch {
	case errors.As(err, &limit):
		return fail(limit.Reason)
	case err != nil:
		finish()
		if ctx.Err() != nil {
			return fmt.Errorf("checking the environment for the operator's values: %w", ctx.Err())
		}
		return fmt.Errorf("checking the environment for the operator's values: %w", err)
	case why != nil:
		return refuse(why)
	}
	log.Note(fmt.Sprintf("setup finished in %s; committing the environment", time.Since(start).Round(100*time.Millisecond)))
	id, err := sb.Commit(ctx, env.Ref, m.imageConfig(base, req, env, exported))
	if errors.As(err, &limit) {
		return fail(limit.Reason)
	}
	if err != nil {
		finish()
		return err
	}
	release, err := sandbox.Pin(ctx, m.docker, req.Sandbox, req.RunID, id)
	if err != nil {
		finish()
		return err
	}
	finish()
	env.Image, env.release = id, release
	m.runLog(ctx, req).Info("environment built", "key", env.Key, "image", id, "elapsed", run.Duration)
	return nil
}

// setupEnv is the setup script's environment on top of the image's: frognano's few names,
// then the operator's entries. Nothing else of this process's environment is passed.
func (m *Manager) setupEnv(commit string) []string {
	out := []string{setupHome, aptFrontend}
	for _, kv := range m.cfg.Env {
		out = append(out, kv)
	}
	return append(out, setupVar+"=1", envFileVar+"="+EnvFile, baseCommitVar+"="+commit)
}

// readEnvFile reads and checks what setup wrote to $FROGNANO_ENV (nothing when it wrote none).
func readEnvFile(ctx context.Context, sb *sandbox.Sandbox) ([]string, error) {
	res, err := sb.Run(ctx, sandbox.ExecSpec{
		Argv:      []string{"/bin/sh", "-c", `if [ -e "$1" ] || [ -L "$1" ]; then exec cat -- "$1"; fi`, "sh", EnvFile},
		User:      sandbox.SetupUser,
		Timeout:   envReadTimeout,
		MaxOutput: maxEnvFileBytes + 1,
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading $%s: %w", envFileVar, err)
	case res.TimedOut || res.ExitCode != 0:
		return nil, fmt.Errorf("reading $%s failed (exit status %d): it must be a regular file", envFileVar, res.ExitCode)
	case res.Truncated || len(res.Stdout) > maxEnvFileBytes:
		return nil, fmt.Errorf("$%s is over the %d-byte limit", envFileVar, maxEnvFileBytes)
	}
	return parseEnvFile(res.Stdout)
}

// imageConfig is the environment image's configuration: the base image's, its environment
// extended by what setup exported, and the environment's labels.
func (m *Manager) imageConfig(base image.InspectResponse, req Request, env *Environment, exported []string) *container.Config {
	c := &container.Config{}
	labels := map[string]string{}
	if bc := base.Config; bc != nil {
		c.Env = append([]string(nil), bc.Env...)
		c.Cmd = append([]string(nil), bc.Cmd...)
		c.Entrypoint = append([]string(nil), bc.Entrypoint...)
		c.User, c.WorkingDir, c.StopSignal = bc.User, bc.WorkingDir, bc.StopSignal
		maps.Copy(labels, bc.Labels)
	}
	c.Env = mergeEnv(c.Env, exported)
	maps.Copy(labels, map[string]string{
		LabelEnv: "1", LabelKey: env.Key, LabelBaseID: base.ID, LabelBaseName: env.BaseImage,
		LabelRepo: req.Repo, LabelCommit: req.Commit, LabelRun: req.RunID,
		LabelScope: req.Scope.Repo, LabelTenant: req.Scope.Tenant, LabelSealed: sealVersion,
	})
	c.Labels = labels
	return c
}
