package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/setting"
	"github.com/frognano/frognano/runner"
	envpkg "github.com/frognano/frognano/runner/env"
)

// env reads the command's settings with internal/setting's reader, which collects every bad
// value (so that one run of the command reports all of them) and never quotes a secret. The
// command's compound settings (setupEnv, imageMap, protectSecrets, attemptsConfig) are its
// methods.
type env struct{ *setting.Env }

func newEnv(getenv func(string) string) env { return env{setting.New(getenv)} }

// runnerConfig is the runner's configuration from FROGNANO_* variables; flags registered by
// bindRunnerFlags override it.
func runnerConfig(getenv func(string) string) (runner.Config, error) {
	e := newEnv(getenv)
	cfg := runner.DefaultConfig()
	l := &cfg.Leaf
	l.BaseURL = e.String("FROGNANO_MODEL_URL", "")
	l.Model = e.String("FROGNANO_MODEL", l.Model)
	l.APIKey = e.String("FROGNANO_MODEL_API_KEY", "")
	l.MaxSteps = e.Int("FROGNANO_MAX_STEPS", l.MaxSteps)
	l.MaxContextTokens = e.Int("FROGNANO_MAX_CONTEXT_TOKENS", l.MaxContextTokens)
	l.MaxCompletionTokens = e.Int("FROGNANO_MAX_TOKENS_PER_TURN", l.MaxCompletionTokens)
	l.Temperature = e.Float("FROGNANO_TEMPERATURE", l.Temperature)
	l.MaxTime = e.Duration("FROGNANO_RUN_TIMEOUT", l.MaxTime)
	s := &cfg.Sandbox
	s.Image = e.String("FROGNANO_SANDBOX_IMAGE", s.Image)
	s.Memory = e.Bytes("FROGNANO_SANDBOX_MEMORY", s.Memory)
	s.CPUs = e.Float("FROGNANO_SANDBOX_CPUS", s.CPUs)
	s.PidsLimit = int64(e.Int("FROGNANO_SANDBOX_PIDS", int(s.PidsLimit)))
	s.TmpfsSize = e.Bytes("FROGNANO_SANDBOX_TMPFS", s.TmpfsSize)
	s.Disk = e.Bytes("FROGNANO_SANDBOX_DISK", s.Disk)
	s.Files = int64(e.Int("FROGNANO_SANDBOX_FILES", int(s.Files)))
	s.ExecutorPath = e.String("FROGNANO_EXECUTOR", defaultExecutorPath())
	// Prune removes every sandbox of this owner at start and stop: two processes sharing one
	// Docker engine (serve and worker on one host) need distinct owners.
	s.Owner = e.String("FROGNANO_SANDBOX_OWNER", s.Owner)
	cfg.TestTimeout = e.Duration("FROGNANO_TEST_TIMEOUT", cfg.TestTimeout)
	cfg.AllowWorkflowChanges = e.Bool("FROGNANO_ALLOW_WORKFLOW_CHANGES", false)
	mode, err := secrets.ParseMode(e.String("FROGNANO_SECRETS", string(secrets.DefaultMode)))
	if err != nil {
		e.Add(err)
	}
	cfg.Secrets = mode
	// The operator's own scanners (check/scanner): only this setting chooses them.
	if cfg.Scanners, err = scanner.Parse(e.Raw("FROGNANO_SCANNERS")); err != nil {
		e.Add(err)
	}
	cfg.ScannerTimeout = e.Duration("FROGNANO_SCANNER_TIMEOUT", scanner.DefaultTimeout)
	if cfg.ScannerFailLevel, err = scanner.ParseFailLevel(e.String("FROGNANO_SCANNER_FAIL_LEVEL", string(scanner.DefaultFailLevel))); err != nil {
		e.Add(err)
	}
	cfg.OSVDir = e.osvDir("FROGNANO_OSV_DIR")
	// The repository's setup script and the environment cache (runner/env).
	cfg.Env.Network = e.String("FROGNANO_SETUP_NETWORK", envpkg.DefaultNetwork)
	if err := envpkg.CheckNetwork(cfg.Env.Network); err != nil {
		e.Add(fmt.Errorf("FROGNANO_SETUP_NETWORK: %v", err))
	}
	cfg.Env.Timeout = e.Duration("FROGNANO_SETUP_TIMEOUT", envpkg.DefaultTimeout)
	cfg.Env.CacheSize = e.Bytes("FROGNANO_ENV_CACHE_SIZE", envpkg.DefaultCacheSize)
	cfg.Env.Disk = e.Bytes("FROGNANO_SETUP_DISK", envpkg.DefaultDisk)
	cfg.Env.Env = e.setupEnv("FROGNANO_SETUP_ENV")
	e.protectSecrets(&cfg)
	cfg.Images = e.imageMap("FROGNANO_SANDBOX_IMAGES")
	e.attemptsConfig(&cfg)
	return cfg, e.Err()
}

// setupEnv reads FROGNANO_SETUP_ENV: what the repository's setup script gets besides frognano's
// own names, and nothing else of this process's environment does. Entries are separated by
// white space: NAME passes this process's value of NAME (for proxy settings: HTTPS_PROXY
// NO_PROXY), NAME=value passes that value.
func (e env) setupEnv(name string) []string {
	var out []string
	for _, entry := range strings.Fields(e.Raw(name)) {
		n, v, literal := strings.Cut(entry, "=")
		if !envNameRE.MatchString(n) || strings.HasPrefix(strings.ToUpper(n), "FROGNANO_") {
			e.Add(fmt.Errorf("%s: %q is not NAME or NAME=value (NAME a shell identifier, not FROGNANO_*)", name, n))
			continue
		}
		if !literal {
			if v = e.Raw(n); v == "" {
				e.Add(fmt.Errorf("%s names %s, which is not set", name, n))
				continue
			}
		}
		out = append(out, n+"="+v)
	}
	return out
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// protectSecrets hands the configuration's secrets to frognano's one redactor
// (githubapp.Redact, which every published, stored and logged text passes), for the life of
// the process, as the configuration is read: every command that runs agents reads it first.
// Setup's values are among them (githubapp.SettingSecrets says which, and refuses a URL
// password too short to redact): runner/env refuses an environment setup left one in, and the
// runner refuses a patch that publishes one in any form, since a file cannot be redacted.
func (e env) protectSecrets(cfg *runner.Config) {
	secrets, err := githubapp.SettingSecrets(cfg.Env.Env)
	if err != nil {
		e.Add(fmt.Errorf("FROGNANO_SETUP_ENV: %w", err))
	}
	for _, s := range append(secrets, cfg.Leaf.APIKey) {
		githubapp.RegisterConfigSecret(s)
	}
	cfg.SecretValues = githubapp.SecretMatcher
}

// imageMap reads FROGNANO_SANDBOX_IMAGES (see runner/env ParseImageMap).
func (e env) imageMap(name string) envpkg.ImageMap {
	m, err := envpkg.ParseImageMap(e.Raw(name))
	if err != nil {
		e.Add(fmt.Errorf("%s: %v", name, err))
	}
	return m
}

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

// byteSize is a flag holding a size read by setting.ParseBytes, like the FROGNANO_* size variables.
type byteSize struct{ p *int64 }

func (b byteSize) String() string {
	if b.p == nil {
		return ""
	}
	return strconv.FormatInt(*b.p, 10)
}

func (b byteSize) Set(s string) error {
	n, err := setting.ParseBytes(s)
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

// defaultExecutorPath is frognano-executor beside this binary (how `make build` and the
// service image install them).
func defaultExecutorPath() string {
	self, err := os.Executable()
	if err != nil {
		return "frognano-executor"
	}
	return filepath.Join(filepath.Dir(self), "frognano-executor")
}
