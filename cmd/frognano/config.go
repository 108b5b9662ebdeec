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
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/runner"
	envpkg "github.com/frognano/frognano/runner/env"
)

// env reads FROGNANO_* variables with named defaults and collects every bad value, so that
// one run of the command reports all of them.
type env struct {
	getenv func(string) string
	errs   []error
}

func (e *env) str(name, def string) string {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		return v
	}
	return def
}

func (e *env) int(name string, def int) int {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a non-negative integer", name, v))
		return def
	}
	return n
}

func (e *env) float(name string, def float64) float64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a non-negative number", name, v))
		return def
	}
	return f
}

func (e *env) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a duration such as 45m or 90s", name, v))
		return def
	}
	return d
}

func (e *env) bool(name string, def bool) bool {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not true or false", name, v))
		return def
	}
	return b
}

func (e *env) bytes(name string, def int64) int64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := parseBytes(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: %v", name, v, err))
		return def
	}
	return n
}

func (e *env) err() error { return errors.Join(e.errs...) }

// parseBytes reads sizes such as 4g, 512m, 1GiB or a plain byte count.
func parseBytes(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("not a size such as 4g, 512m or a byte count")
	}
	return n * mult, nil
}

// runnerConfig is the runner's configuration from FROGNANO_* variables; flags registered by
// bindRunnerFlags override it.
func runnerConfig(getenv func(string) string) (runner.Config, error) {
	e := &env{getenv: getenv}
	cfg := runner.DefaultConfig()
	l := &cfg.Leaf
	l.BaseURL = e.str("FROGNANO_MODEL_URL", "")
	l.Model = e.str("FROGNANO_MODEL", l.Model)
	l.APIKey = e.str("FROGNANO_MODEL_API_KEY", "")
	l.MaxSteps = e.int("FROGNANO_MAX_STEPS", l.MaxSteps)
	l.MaxContextTokens = e.int("FROGNANO_MAX_CONTEXT_TOKENS", l.MaxContextTokens)
	l.MaxCompletionTokens = e.int("FROGNANO_MAX_TOKENS_PER_TURN", l.MaxCompletionTokens)
	l.Temperature = e.float("FROGNANO_TEMPERATURE", l.Temperature)
	l.MaxTime = e.duration("FROGNANO_RUN_TIMEOUT", l.MaxTime)
	s := &cfg.Sandbox
	s.Image = e.str("FROGNANO_SANDBOX_IMAGE", s.Image)
	s.Memory = e.bytes("FROGNANO_SANDBOX_MEMORY", s.Memory)
	s.CPUs = e.float("FROGNANO_SANDBOX_CPUS", s.CPUs)
	s.PidsLimit = int64(e.int("FROGNANO_SANDBOX_PIDS", int(s.PidsLimit)))
	s.TmpfsSize = e.bytes("FROGNANO_SANDBOX_TMPFS", s.TmpfsSize)
	s.Disk = e.bytes("FROGNANO_SANDBOX_DISK", s.Disk)
	s.Files = int64(e.int("FROGNANO_SANDBOX_FILES", int(s.Files)))
	s.ExecutorPath = e.str("FROGNANO_EXECUTOR", defaultExecutorPath())
	// Prune removes every sandbox of this owner at start and stop: two processes sharing one
	// Docker engine (serve and worker on one host) need distinct owners.
	s.Owner = e.str("FROGNANO_SANDBOX_OWNER", s.Owner)
	cfg.TestTimeout = e.duration("FROGNANO_TEST_TIMEOUT", cfg.TestTimeout)
	cfg.AllowWorkflowChanges = e.bool("FROGNANO_ALLOW_WORKFLOW_CHANGES", false)
	// The repository's setup script and the environment cache (runner/env).
	cfg.Env.Network = e.str("FROGNANO_SETUP_NETWORK", envpkg.DefaultNetwork)
	if err := envpkg.CheckNetwork(cfg.Env.Network); err != nil {
		e.errs = append(e.errs, fmt.Errorf("FROGNANO_SETUP_NETWORK: %v", err))
	}
	cfg.Env.Timeout = e.duration("FROGNANO_SETUP_TIMEOUT", envpkg.DefaultTimeout)
	cfg.Env.CacheSize = e.bytes("FROGNANO_ENV_CACHE_SIZE", envpkg.DefaultCacheSize)
	cfg.Env.Disk = e.bytes("FROGNANO_SETUP_DISK", envpkg.DefaultDisk)
	cfg.Env.Env = e.setupEnv("FROGNANO_SETUP_ENV")
	e.protectSecrets(&cfg)
	cfg.Images = e.imageMap("FROGNANO_SANDBOX_IMAGES")
	e.attemptsConfig(&cfg)
	return cfg, e.err()
}

// setupEnv reads FROGNANO_SETUP_ENV: what the repository's setup script gets besides frognano's
// own names, and nothing else of this process's environment does. Entries are separated by
// white space: NAME passes this process's value of NAME (for proxy settings: HTTPS_PROXY
// NO_PROXY), NAME=value passes that value.
func (e *env) setupEnv(name string) []string {
	var out []string
	for _, entry := range strings.Fields(e.getenv(name)) {
		n, v, literal := strings.Cut(entry, "=")
		if !envNameRE.MatchString(n) || strings.HasPrefix(strings.ToUpper(n), "FROGNANO_") {
			e.errs = append(e.errs, fmt.Errorf("%s: %q is not NAME or NAME=value (NAME a shell identifier, not FROGNANO_*)", name, n))
			continue
		}
		if !literal {
			if v = e.getenv(n); v == "" {
				e.errs = append(e.errs, fmt.Errorf("%s names %s, which is not set", name, n))
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
// Setup's values are among them, since setup can write them where the model reads them
// (githubapp.SettingSecrets says which, and refuses a URL password too short to redact); the
// runner refuses a patch that holds one, since a file cannot be redacted.
func (e *env) protectSecrets(cfg *runner.Config) {
	secrets, err := githubapp.SettingSecrets(cfg.Env.Env)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("FROGNANO_SETUP_ENV: %w", err))
	}
	for _, s := range append(secrets, cfg.Leaf.APIKey) {
		githubapp.RegisterConfigSecret(s)
	}
	cfg.HoldsSecret = githubapp.HoldsSecret
}

// imageMap reads FROGNANO_SANDBOX_IMAGES (see runner/env ParseImageMap).
func (e *env) imageMap(name string) envpkg.ImageMap {
	m, err := envpkg.ParseImageMap(e.getenv(name))
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %v", name, err))
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

// byteSize is a flag holding a size read by parseBytes, like the FROGNANO_* size variables.
type byteSize struct{ p *int64 }

func (b byteSize) String() string {
	if b.p == nil {
		return ""
	}
	return strconv.FormatInt(*b.p, 10)
}

func (b byteSize) Set(s string) error {
	n, err := parseBytes(s)
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
