package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/runner"
)

// The commands read their configuration from package config (config.Runner,
// config.LoadService), which alone reads the environment; the flags below override it.

// bindRunnerFlags registers the flags shared by every command that runs agents.
func bindRunnerFlags(fs *flag.FlagSet, cfg *runner.Config) {
	fs.StringVar(&cfg.Leaf.BaseURL, "model-url", cfg.Leaf.BaseURL, "OpenAI-compatible base URL of the model server, e.g. http://gpu:8000/v1 (FROGNANO_MODEL_URL)")
	fs.StringVar(&cfg.Leaf.Model, "model", cfg.Leaf.Model, "served model name (FROGNANO_MODEL)")
	fs.StringVar(&cfg.Sandbox.Image, "image", cfg.Sandbox.Image, "sandbox image (FROGNANO_SANDBOX_IMAGE)")
	fs.StringVar(&cfg.TestCmd, "test-cmd", cfg.TestCmd, `the repository's test command; "" detects it, "none" runs no tests`)
	fs.IntVar(&cfg.Leaf.MaxSteps, "max-steps", cfg.Leaf.MaxSteps, "model turns at most (FROGNANO_MAX_STEPS)")
	fs.IntVar(&cfg.Leaf.MaxContextTokens, "max-context-tokens", cfg.Leaf.MaxContextTokens, "context budget in tokens (FROGNANO_MAX_CONTEXT_TOKENS)")
	fs.IntVar(&cfg.Leaf.MaxCompletionTokens, "max-tokens-per-turn", cfg.Leaf.MaxCompletionTokens, "max_completion_tokens of each turn (FROGNANO_MAX_TOKENS_PER_TURN)")
	fs.DurationVar(&cfg.Leaf.MaxTime, "timeout", cfg.Leaf.MaxTime, "wall-time limit of the agent loop (FROGNANO_RUN_TIMEOUT)")
	fs.DurationVar(&cfg.TestTimeout, "test-timeout", cfg.TestTimeout, "time limit of each test run (FROGNANO_TEST_TIMEOUT)")
	fs.BoolVar(&cfg.AllowWorkflowChanges, "allow-workflow-changes", cfg.AllowWorkflowChanges, "keep changes under .github/workflows/ in the patch (FROGNANO_ALLOW_WORKFLOW_CHANGES)")
	fs.StringVar(&cfg.Sandbox.ExecutorPath, "executor", cfg.Sandbox.ExecutorPath, "path of the static frognano-executor binary (FROGNANO_EXECUTOR)")
	fs.Var(byteSize{&cfg.Sandbox.Disk}, "sandbox-disk", "most each sandbox's workspace may hold, e.g. 4g or 512m (FROGNANO_SANDBOX_DISK)")
}

// bindSetupFlags registers the setup flags of the commands that run on a local checkout
// (run, eval, eval tasks); the service takes them from its environment only.
func bindSetupFlags(fs *flag.FlagSet, cfg *runner.Config) {
	fs.StringVar(&cfg.Env.Network, "setup-network", cfg.Env.Network, `Docker network the repository's .frognano/setup.sh runs on; "none": no network (FROGNANO_SETUP_NETWORK)`)
	fs.BoolVar(&cfg.Env.Disabled, "no-setup", false, "run no setup script: the sandboxes use the image as it is")
}

// byteSize is a flag holding a size read by config.ParseBytes, like the FROGNANO_* size variables.
type byteSize struct{ p *int64 }

func (b byteSize) String() string {
	if b.p == nil {
		return ""
	}
	return strconv.FormatInt(*b.p, 10)
}

func (b byteSize) Set(s string) error {
	n, err := config.ParseBytes(s)
	if err != nil {
		return err
	}
	*b.p = n
	return nil
}

// checkRunnerConfig validates what flags and variables produced, one clear error per problem.
func checkRunnerConfig(cfg runner.Config) error {
	var errs []error
	if cfg.Leaf.BaseURL == "" {
		errs = append(errs, errors.New("no model server: set --model-url or FROGNANO_MODEL_URL (e.g. http://localhost:8000/v1)"))
	} else if u, err := url.Parse(cfg.Leaf.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("model URL %q is not an http(s) URL", cfg.Leaf.BaseURL))
	}
	if cfg.Leaf.MaxSteps < 1 {
		errs = append(errs, errors.New("--max-steps must be at least 1"))
	}
	if cfg.Leaf.MaxTime <= 0 {
		errs = append(errs, errors.New("--timeout must be positive"))
	}
	return errors.Join(errs...)
}
