package main

import (
	"fmt"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// DefaultModelConcurrency is FROGNANO_MODEL_CONCURRENCY's default: the model requests this
// process keeps in flight at once, all runs and attempts together.
const DefaultModelConcurrency = 8

// attemptsConfig reads the attempt settings into cfg.Attempts: FROGNANO_ATTEMPTS (default 1),
// FROGNANO_MAX_ATTEMPTS (the operator's cap, default runner.DefaultMaxAttempts),
// FROGNANO_ATTEMPTS_STOP_EARLY, FROGNANO_MODEL_CONCURRENCY (one limiter for the whole
// process: every run of a serve or worker process shares it; separate processes against one
// model server add up) and FROGNANO_MAX_SANDBOXES (the sandboxes of every kind this process
// keeps at once: agents, tests before and after, setup containers; by default what the
// host's memory holds at FROGNANO_SANDBOX_MEMORY each, less one for the host itself). It is
// called once per process, after the sandbox settings are read.
func (e env) attemptsConfig(cfg *runner.Config) {
	a := &cfg.Attempts
	a.N = e.Int("FROGNANO_ATTEMPTS", 1)
	a.Max = e.Int("FROGNANO_MAX_ATTEMPTS", runner.DefaultMaxAttempts)
	a.StopEarly = e.Bool("FROGNANO_ATTEMPTS_STOP_EARLY", false)
	a.ModelLimiter = leaf.NewLimiter(e.Int("FROGNANO_MODEL_CONCURRENCY", DefaultModelConcurrency))
	cfg.Sandbox.Slots = sandbox.NewSlots(e.Int("FROGNANO_MAX_SANDBOXES", defaultMaxSandboxes(sandbox.HostMemory(), sandboxMemory(cfg.Sandbox.Memory))))
	if err := checkAttempts(cfg.Attempts); err != nil {
		e.Add(err)
	}
}

// checkAttempts refuses more attempts than the operator allows.
func checkAttempts(a runner.AttemptOptions) error {
	if a.Max < 1 {
		return fmt.Errorf("FROGNANO_MAX_ATTEMPTS must be at least 1")
	}
	if a.N > a.Max {
		return fmt.Errorf("%d attempts asked for; this host allows at most %d (FROGNANO_MAX_ATTEMPTS)", a.N, a.Max)
	}
	return nil
}

// defaultMaxSandboxes is how many sandboxes of sandboxMem bytes fit in hostMem, one kept back
// for the host itself (frognano, the Docker engine, PostgreSQL); at least 1, and 0 (no bound)
// when either is unknown. A sandbox's memory limit is its most, not what it usually takes, so
// the default errs on the safe side; an operator who knows the load sets the variable.
func defaultMaxSandboxes(hostMem, sandboxMem int64) int {
	if hostMem <= 0 || sandboxMem <= 0 {
		return 0
	}
	return max(int(hostMem/sandboxMem)-1, 1)
}

// sandboxMemory is the memory limit a sandbox gets from the configured one (0: the default).
func sandboxMemory(configured int64) int64 {
	if configured <= 0 {
		return sandbox.DefaultMemory
	}
	return configured
}
