package config

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// Runner is the runner's configuration, for every command that runs agents (run, eval,
// serve, worker, sandbox); their flags override it. It reports every bad value at once.
// Reading it hands the configuration's secrets (setup's values, the model API key) to the one
// redactor, for the life of the process.
func Runner(getenv func(string) string) (runner.Config, error) {
	e := newEnv(getenv)
	cfg := runner.DefaultConfig()
	l := &cfg.Leaf
	l.BaseURL = modelURL.get(e)
	l.Model = model.get(e)
	l.APIKey = modelAPIKey.get(e)
	l.MaxSteps = maxSteps.get(e)
	l.MaxContextTokens = maxContextTokens.get(e)
	l.MaxCompletionTokens = maxTokensPerTurn.get(e)
	l.Temperature = temperature.get(e)
	l.MaxTime = runTimeout.get(e)
	s := &cfg.Sandbox
	s.Image = sandboxImage.get(e)
	s.Memory = sandboxMemory.get(e)
	s.CPUs = sandboxCPUs.get(e)
	s.PidsLimit = sandboxPids.get(e)
	s.TmpfsSize = sandboxTmpfs.get(e)
	s.Disk = sandboxDisk.get(e)
	s.Files = sandboxFiles.get(e)
	s.ExecutorPath = executor.or(e, defaultExecutorPath())
	// Prune removes every sandbox of this owner at start and stop: two processes sharing one
	// Docker engine (serve and worker on one host) need distinct owners.
	s.Owner = sandboxOwner.or(e, s.Owner)
	cfg.TestTimeout = testTimeout.get(e)
	cfg.AllowWorkflowChanges = allowWorkflowChanges.get(e)
	cfg.Secrets = secretsMode.get(e)
	// The operator's own scanners (check/scanner): only this setting chooses them.
	cfg.Scanners = scanners.get(e)
	cfg.ScannerTimeout = scannerTimeout.get(e)
	cfg.ScannerFailLevel = scannerFailLevel.get(e)
	cfg.OSVDir = osvDir.get(e)
	// The repository's setup script and the environment cache (runner/env).
	cfg.Env.Network = setupNetwork.get(e)
	cfg.Env.Timeout = setupTimeout.get(e)
	cfg.Env.CacheSize = envCacheSize.get(e)
	cfg.Env.Disk = setupDisk.get(e)
	cfg.Env.Env = setupEnv.get(e)
	protectSecrets(e, &cfg)
	cfg.Images = sandboxImages.get(e)
	readAttempts(e, &cfg)
	readModels(e, &cfg)
	return cfg, e.Err()
}

// protectSecrets hands the configuration's secrets to frognano's one redactor
// (githubapp.Redact, which every published, stored and logged text passes), for the life of
// the process, as the configuration is read: every command that runs agents reads it first.
// Setup's values are among them (githubapp.SettingSecrets says which, and refuses a URL
// password too short to redact): runner/env refuses an environment setup left one in, and the
// runner refuses a patch that publishes one in any form, since a file cannot be redacted.
func protectSecrets(e *env, cfg *runner.Config) {
	secrets, err := githubapp.SettingSecrets(cfg.Env.Env)
	if err != nil {
		e.Add(fmt.Errorf("%s: %w", setupEnv.Name, err))
	}
	for _, s := range append(secrets, cfg.Leaf.APIKey) {
		githubapp.RegisterConfigSecret(s)
	}
	cfg.SecretValues = githubapp.SecretMatcher
}

// readAttempts reads the attempt settings into cfg.Attempts: FROGNANO_ATTEMPTS,
// FROGNANO_MAX_ATTEMPTS (the operator's cap), FROGNANO_ATTEMPTS_STOP_EARLY,
// FROGNANO_MODEL_CONCURRENCY (one limiter for the whole process: every run of a serve or
// worker process shares it; separate processes against one model server add up) and
// FROGNANO_MAX_SANDBOXES (the sandboxes of every kind this process keeps at once: agents,
// tests before and after, setup containers; by default what the host's memory holds at
// FROGNANO_SANDBOX_MEMORY each, less one for the host itself). It runs once per process, after
// the sandbox settings are read.
func readAttempts(e *env, cfg *runner.Config) {
	a := &cfg.Attempts
	a.N = attempts.get(e)
	a.Max = maxAttempts.get(e)
	a.StopEarly = attemptsStopEarly.get(e)
	a.ModelLimiter = leaf.NewLimiter(modelConcurrency.get(e))
	cfg.Sandbox.Slots = sandbox.NewSlots(maxSandboxes.or(e, DefaultMaxSandboxes(sandbox.HostMemory(), sandboxMemoryOf(cfg.Sandbox.Memory))))
	if err := CheckAttempts(cfg.Attempts); err != nil {
		e.Add(err)
	}
}

// CheckAttempts refuses more attempts than the operator allows (FROGNANO_MAX_ATTEMPTS); the
// commands whose flags set the attempts check again after them.
func CheckAttempts(a runner.AttemptOptions) error {
	if a.Max < 1 {
		return fmt.Errorf("%s must be at least 1", maxAttempts.Name)
	}
	if a.N > a.Max {
		return fmt.Errorf("%d attempts asked for; this host allows at most %d (%s)", a.N, a.Max, maxAttempts.Name)
	}
	return nil
}

// DefaultMaxSandboxes is FROGNANO_MAX_SANDBOXES's default: how many sandboxes of sandboxMem
// bytes fit in hostMem, one kept back for the host itself (frognano, the Docker engine,
// PostgreSQL); at least 1, and 0 (no bound) when either is unknown. A sandbox's memory limit
// is its most, not what it usually takes, so the default errs on the safe side; an operator
// who knows the load sets the variable.
func DefaultMaxSandboxes(hostMem, sandboxMem int64) int {
	if hostMem <= 0 || sandboxMem <= 0 {
		return 0
	}
	return max(int(hostMem/sandboxMem)-1, 1)
}

// sandboxMemoryOf is the memory limit a sandbox gets from the configured one (0: the default).
func sandboxMemoryOf(configured int64) int64 {
	if configured <= 0 {
		return sandbox.DefaultMemory
	}
	return configured
}

// defaultExecutorPath is frognano-executor beside this binary (how `make build` and the
// service image install them).
func defaultExecutorPath() string {
	self, err := os.Executable()
	if err != nil {
		return "frognano-executor"
	}
	return filepath.Join(filepath.Dir(self), "frognano-executor")
}
