package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/queue"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
	"github.com/frognano/frognano/web/auth"
)

// Defaults of the settings that belong to no package but the service's own wiring.
const (
	DefaultAddr            = ":8080"
	DefaultLabel           = "frognano"
	DefaultWorkers         = 1
	DefaultShutdownTimeout = 15 * time.Second
	DefaultReapInterval    = time.Minute
	// DefaultModelConcurrency is FROGNANO_MODEL_CONCURRENCY's default: the model requests
	// this process keeps in flight at once, all runs and attempts together.
	DefaultModelConcurrency = 8
	// DefaultModelName is FROGNANO_MODEL_NAME's default: the operator's name of the model of
	// FROGNANO_MODEL_URL.
	DefaultModelName = "default"
)

// Every variable frognano reads, each declared once: its name, its default (typed, and as
// docs/configuration.md writes it), its parser and a line saying what it sets. The documents'
// test (cmd/frognano TestDocumentedDefaults) holds the tables against this list. A name that
// a package's own texts give (githubapp's explanations and run's budget comment on GitHub,
// web/auth's refusals) is that package's constant, so that it is spelled once; it is declared
// and read here only.

// The database and the GitHub App.
var (
	databaseURL = secret(declare("DATABASE_URL", "", "(required)",
		"PostgreSQL connection string", (*env).String))
	appID = declare(githubapp.EnvAppID, int64(0), "(required)",
		"the GitHub App's id", (*env).Int64)
	privateKey = secret(declare(githubapp.EnvPrivateKey, "", "(one required)",
		"the App's RSA private key (PEM, PKCS#1 or PKCS#8)", secretValue))
	privateKeyFile = declare(githubapp.EnvPrivateKeyFile, "", "(one required)",
		"a file holding the App's private key, instead of GITHUB_APP_PRIVATE_KEY", rawValue)
	webhookSecret = secret(declare("GITHUB_WEBHOOK_SECRET", "", "(required for `serve`)",
		"the webhook secret; deliveries without a valid signature get 401", secretValue))
	gitHubURL = declareApplied(githubapp.EnvURL, "", githubapp.DefaultURL, "`https://github.com`",
		"GitHub, or a GitHub Enterprise Server host such as https://ghe.example.com (githubapp applies the default)", rawValue)
	commitName = declare(githubapp.EnvCommitName, "", "(none: the App's bot, signed)",
		"the author and committer name of frognano's commits (set, GitHub does not sign them)", rawValue)
	commitEmail = declare(githubapp.EnvCommitEmail, "", "(none: the App's bot, signed)",
		"the author and committer email of frognano's commits (set, GitHub does not sign them)", rawValue)
	checkRuns = declare("FROGNANO_CHECK_RUNS", true, "`true`",
		"report the check run `frognano / tests` on each pushed commit (needs checks: write)", (*env).Bool)
)

// The web server, the run pages and the admin listener.
var (
	addr = declare("FROGNANO_ADDR", DefaultAddr, "`:8080`",
		"listen address of serve (webhook, health, run pages)", (*env).String)
	publicURL = declare(auth.EnvPublicURL, "", "(no links)",
		"the address browsers reach serve at; links to the run pages, and sign-in's own address", rawValue)
	clientID = declare(auth.EnvClientID, "", "(pages off)",
		"the App's OAuth client id, for sign-in to the run pages with GitHub", rawValue)
	clientSecret = secret(declare(auth.EnvClientSecret, "", "(pages off)",
		"the App's OAuth client secret, for sign-in to the run pages with GitHub", secretValue))
	webToken = secret(declare(auth.EnvWebToken, "", "(pages off)",
		"a shared access token for the run pages, instead of GitHub sign-in", secretValue))
	sessionKey = secret(declare(auth.EnvSessionKey, "", "(pages off)",
		"the key of the run pages' session cookies (unset: a random one per process)", secretValue))
	metricsAddr = declare("FROGNANO_METRICS_ADDR", "", "(off)",
		"a private listen address for /metrics and /riverui", (*env).String)
	adminToken = secret(declare("FROGNANO_ADMIN_TOKEN", "", "(off)",
		"the token of River's UI on the metrics address", secretValue))
)

// The API for automation, as `frognano runs start` reaches it.
var (
	apiURL = declare("FROGNANO_API_URL", "", "(required for `runs start`)",
		"the address `frognano runs start` reaches serve's API at", rawValue)
	apiToken = secret(declare("FROGNANO_API_TOKEN", "", "(required for `runs start`)",
		"the API token `frognano runs start` sends (made with `frognano tokens create`)", secretValue))
)

// Which runs start, and how many at once.
var (
	label = declare("FROGNANO_LABEL", DefaultLabel, "`frognano`",
		"the label that starts a run (a repository's settings file may name its own: `label:`)", (*env).String)
	appSlug = declare("FROGNANO_APP_SLUG", "", "the App's slug, from GitHub",
		"the name reviewers mention to ask for a follow-up", (*env).String)
	ciFollowUps = declare("FROGNANO_CI_FOLLOWUPS", runs.DefaultCIFollowUps, "`1`",
		"follow-up runs a pull request's failed CI may start (0: none)", (*env).Int)
	workers = declare("FROGNANO_WORKERS", DefaultWorkers, "`1`",
		"runs this process works at once", (*env).Int)
	perInstallation = declare("FROGNANO_PER_INSTALLATION", queue.DefaultPerInstallationLimit, "`2`",
		"running runs per installation, across every worker", (*env).Int)
	budgetInstallationRuns = declare(runs.EnvBudgetInstallationRuns, int64(0), "`0`",
		"runs of one installation that may start per UTC day (0: no limit)", (*env).Int64)
	budgetInstallationTokens = declare(runs.EnvBudgetInstallationTokens, int64(0), "`0`",
		"tokens the runs of one installation started in a UTC day may use (0: no limit)", (*env).Int64)
	budgetRepoRuns = declare(runs.EnvBudgetRepoRuns, int64(0), "`0`",
		"runs of each repository that may start per UTC day (0: no limit)", (*env).Int64)
	budgetRepoTokens = declare(runs.EnvBudgetRepoTokens, int64(0), "`0`",
		"tokens the runs of each repository started in a UTC day may use (0: no limit)", (*env).Int64)
)

// The model and the agent loop.
var (
	modelURL = declare("FROGNANO_MODEL_URL", "", "(required to run agents)",
		"OpenAI-compatible base URL of the model server", (*env).String)
	model = declare("FROGNANO_MODEL", leaf.DefaultModel, "`microsoft/FrogNano-4B-2609`",
		"the served model name", (*env).String)
	modelAPIKey = secret(declare("FROGNANO_MODEL_API_KEY", "", "",
		"bearer token for the model server", (*env).String))
	maxSteps = declare("FROGNANO_MAX_STEPS", leaf.DefaultMaxSteps, "`100`",
		"model turns per run", (*env).Int)
	attempts = declare("FROGNANO_ATTEMPTS", 1, "`1`",
		"independent attempts per run", (*env).Int)
	maxAttempts = declare("FROGNANO_MAX_ATTEMPTS", runner.DefaultMaxAttempts, "`8`",
		"the most attempts a run may ask for", (*env).Int)
	attemptsStopEarly = declare("FROGNANO_ATTEMPTS_STOP_EARLY", false, "`false`",
		"cancel the other attempts once one fixes everything and breaks nothing", (*env).Bool)
	modelConcurrency = declare("FROGNANO_MODEL_CONCURRENCY", DefaultModelConcurrency, "`8`",
		"model requests in flight for the whole process, to the default model", (*env).Int)
	modelName = declare("FROGNANO_MODEL_NAME", DefaultModelName, "`default`",
		"the operator's name of the default model (FROGNANO_MODEL_URL's), which runs use unless they ask for another", (*env).String)
	modelsFile = declare(ModelsFileVar, "", "(none: only the default model)",
		"a YAML file naming more model servers: name, url, model, api_key_env or api_key_file, concurrency, repositories", (*env).String)
	escalateTo = declare("FROGNANO_ESCALATE_TO", "", "(off)",
		"a model's name: when no attempt of the first model passes the tests, this one tries", (*env).String)
	maxSandboxes = declare("FROGNANO_MAX_SANDBOXES", 0, "host memory / `FROGNANO_SANDBOX_MEMORY`, less one",
		"sandboxes of every kind this process keeps at once", (*env).Int)
	maxContextTokens = declare("FROGNANO_MAX_CONTEXT_TOKENS", leaf.DefaultMaxContextTokens, "`65536`",
		"context budget in tokens", (*env).Int)
	maxTokensPerTurn = declare("FROGNANO_MAX_TOKENS_PER_TURN", leaf.DefaultMaxCompletionTokens, "`8192`",
		"max_completion_tokens of each turn", (*env).Int)
	temperature = declare("FROGNANO_TEMPERATURE", float64(leaf.DefaultTemperature), "`0.6`",
		"sampling temperature", (*env).Float)
	runTimeout = declare("FROGNANO_RUN_TIMEOUT", leaf.DefaultMaxTime, "`45m`",
		"wall-time limit of the agent loop", (*env).Duration)
	testTimeout = declare("FROGNANO_TEST_TIMEOUT", runner.DefaultTestTimeout, "`10m`",
		"time limit of each test run", (*env).Duration)
)

// The queue.
var (
	jobTimeout = declare("FROGNANO_JOB_TIMEOUT", queue.DefaultJobTimeout, "`90m`",
		"a whole job: clone, agent, tests, publish", (*env).Duration)
	softStopTimeout = declare("FROGNANO_SOFT_STOP_TIMEOUT", queue.DefaultSoftStopTimeout, "`30s`",
		"on shutdown, how long running jobs may finish before they are cancelled", (*env).Duration)
	deliveryRetention = declare("FROGNANO_DELIVERY_RETENTION", queue.DefaultDeliveryRetention, "`240h`",
		"how long delivery ids are kept for deduplication", (*env).Duration)
)

// Following pull requests to their end (issue 31: docs/outcomes.md).
var (
	outcomesInterval = declare("FROGNANO_OUTCOMES_INTERVAL", outcome.DefaultInterval, "`15m`",
		"how often the open pull requests runs published to are reconciled with GitHub (0: never; `frognano outcomes sync` still does)", (*env).Duration)
	outcomesMaxAge = declare("FROGNANO_OUTCOMES_MAX_AGE", outcome.DefaultMaxAge, "`720h`",
		"pull requests opened longer ago are not asked about any more", (*env).Duration)
	outcomesBudget = declare("FROGNANO_OUTCOMES_BUDGET", outcome.DefaultBudget, "`200`",
		"GitHub API calls one reconciliation round may make at most", (*env).Int)
)

// Sandboxes, the environment (setup) and its cache.
var (
	sandboxImage = declare("FROGNANO_SANDBOX_IMAGE", sandbox.DefaultImage, "`frognano-sandbox:latest`",
		"the sandbox image", (*env).String)
	sandboxImages = declare("FROGNANO_SANDBOX_IMAGES", envpkg.ImageMap(nil), "",
		"the base image per repository: OWNER/NAME=IMAGE,OWNER/*=IMAGE,*=IMAGE", imageMap)
	setupNetwork = declare("FROGNANO_SETUP_NETWORK", envpkg.DefaultNetwork, "`bridge`",
		"the Docker network a repository's setup script runs on (none: no network)", network)
	setupTimeout = declare("FROGNANO_SETUP_TIMEOUT", envpkg.DefaultTimeout, "`15m`",
		"time limit of one setup, and of its seal check", (*env).Duration)
	setupDisk = declare("FROGNANO_SETUP_DISK", int64(envpkg.DefaultDisk), "`10g`",
		"the most one setup may write outside /workspace", (*env).Bytes)
	setupEnv = declare("FROGNANO_SETUP_ENV", []string(nil), "",
		"what setup gets besides frognano's own names: NAME (this process's value) or NAME=value", setupEnvValue)
	envCacheSize = declare("FROGNANO_ENV_CACHE_SIZE", int64(envpkg.DefaultCacheSize), "`20g`",
		"the most the environment images' own layers may hold together", (*env).Bytes)
	sandboxMemory = declare("FROGNANO_SANDBOX_MEMORY", int64(sandbox.DefaultMemory), "`4g`",
		"memory limit of each sandbox", (*env).Bytes)
	sandboxCPUs = declare("FROGNANO_SANDBOX_CPUS", float64(sandbox.DefaultCPUs), "`2`",
		"CPU limit of each sandbox", (*env).Float)
	sandboxPids = declare("FROGNANO_SANDBOX_PIDS", int64(sandbox.DefaultPidsLimit), "`512`",
		"pids limit of each sandbox", intAs64)
	sandboxTmpfs = declare("FROGNANO_SANDBOX_TMPFS", int64(sandbox.DefaultTmpfsSize), "`1g`",
		"size of each sandbox's /tmp", (*env).Bytes)
	sandboxDisk = declare("FROGNANO_SANDBOX_DISK", int64(sandbox.DefaultDisk), "`4g`",
		"the most each sandbox's workspace may hold", (*env).Bytes)
	sandboxFiles = declare("FROGNANO_SANDBOX_FILES", int64(sandbox.DefaultFiles), "`1000000`",
		"the most files, folders and links each sandbox's workspace may hold", intAs64)
	executor = declare("FROGNANO_EXECUTOR", "", "`frognano-executor` beside the binary",
		"the static tool executor copied into each sandbox", (*env).String)
	sandboxReapInterval = declare("FROGNANO_SANDBOX_REAP_INTERVAL", DefaultReapInterval, "`1m`",
		"how often a worker removes sandboxes an earlier start of its owner made", (*env).Duration)
	workDir = declare("FROGNANO_WORK_DIR", "", "the system temp dir",
		"where host clones are made, in a folder per owner", (*env).String)
	sandboxOwner = declare("FROGNANO_SANDBOX_OWNER", "", "the host name",
		"names this process: its sandboxes, clones and the runs it takes back after a crash", (*env).String)
)

// What is checked of a patch.
var (
	allowWorkflowChanges = declare("FROGNANO_ALLOW_WORKFLOW_CHANGES", false, "`false`",
		"keep changes under .github/workflows/ in patches", (*env).Bool)
	secretsMode = declare("FROGNANO_SECRETS", secrets.DefaultMode, "`block`",
		"what a secret found in a patch does: block or warn", secretsModeValue)
	scanners = declare("FROGNANO_SCANNERS", []scanner.Scanner(nil), "",
		"the operator's own scanners, NAME=COMMAND or NAME[OPTIONS]=COMMAND", scannersValue)
	scannerFailLevel = declare("FROGNANO_SCANNER_FAIL_LEVEL", scanner.DefaultFailLevel, "`error`",
		"a scanner finding at or above it fails the check run: none, note, warning or error", failLevelValue)
	scannerTimeout = declare("FROGNANO_SCANNER_TIMEOUT", scanner.DefaultTimeout, "`5m`",
		"how long each scanner may run", (*env).Duration)
	osvDir = declare("FROGNANO_OSV_DIR", "", "",
		"an offline copy of OSV's per-ecosystem exports (an absolute path)", osvDirValue)
)

// The process.
var (
	autoMigrate = declare("FROGNANO_AUTO_MIGRATE", true, "`true`",
		"apply migrations when serve and worker start", (*env).Bool)
	shutdownTimeout = declare("FROGNANO_SHUTDOWN_TIMEOUT", DefaultShutdownTimeout, "`15s`",
		"how long the HTTP server drains on shutdown", (*env).Duration)
	logLevel = declare("FROGNANO_LOG_LEVEL", "info", "`info`",
		"debug, info, warn or error", lowerString)
)

// The parsers of the variables that are not one plain number, duration, size or string.

// rawValue is the value exactly as set.
func rawValue(e *env, name, _ string) string { return e.Raw(name) }

// secretValue is a credential exactly as set; never quoted.
func secretValue(e *env, name, _ string) string { return e.Secret(name) }

// lowerString is the value without surrounding white space, in lower case.
func lowerString(e *env, name, def string) string { return strings.ToLower(e.String(name, def)) }

// intAs64 is a limit read as an integer and kept as int64.
func intAs64(e *env, name string, def int64) int64 { return int64(e.Int(name, int(def))) }

// network is FROGNANO_SETUP_NETWORK: one that is setup's own (runner/env CheckNetwork).
func network(e *env, name, def string) string {
	n := e.String(name, def)
	if err := envpkg.CheckNetwork(n); err != nil {
		e.Add(fmt.Errorf("%s: %v", name, err))
	}
	return n
}

// setupEnvValue reads FROGNANO_SETUP_ENV: what the repository's setup script gets besides
// frognano's own names, and nothing else of this process's environment does. Entries are
// separated by white space: NAME passes this process's value of NAME (for proxy settings:
// HTTPS_PROXY NO_PROXY), NAME=value passes that value.
func setupEnvValue(e *env, name string, _ []string) []string {
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

// imageMap reads FROGNANO_SANDBOX_IMAGES (see runner/env ParseImageMap).
func imageMap(e *env, name string, _ envpkg.ImageMap) envpkg.ImageMap {
	m, err := envpkg.ParseImageMap(e.Raw(name))
	if err != nil {
		e.Add(fmt.Errorf("%s: %v", name, err))
	}
	return m
}

// secretsModeValue reads FROGNANO_SECRETS (check/secrets ParseMode, whose error names it).
func secretsModeValue(e *env, name string, def secrets.Mode) secrets.Mode {
	mode, err := secrets.ParseMode(e.String(name, string(def)))
	if err != nil {
		e.Add(err)
	}
	return mode
}

// scannersValue reads FROGNANO_SCANNERS (check/scanner Parse, whose error names it and never
// a command): only this setting chooses the operator's scanners.
func scannersValue(e *env, name string, _ []scanner.Scanner) []scanner.Scanner {
	s, err := scanner.Parse(e.Raw(name))
	if err != nil {
		e.Add(err)
	}
	return s
}

// failLevelValue reads FROGNANO_SCANNER_FAIL_LEVEL (check/scanner ParseFailLevel).
func failLevelValue(e *env, name string, def scanner.FailLevel) scanner.FailLevel {
	l, err := scanner.ParseFailLevel(e.String(name, string(def)))
	if err != nil {
		e.Add(err)
	}
	return l
}

// osvDirValue reads FROGNANO_OSV_DIR: the operator's offline copy of OSV's per-ecosystem
// exports (DIR/<Ecosystem>/all.zip), which must be an existing directory given by an absolute
// path. A missing or unreadable export inside it is not an error of the start: each run says
// which ecosystems it could not check.
func osvDirValue(e *env, name, _ string) string {
	dir := e.String(name, "")
	if dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) {
		e.Add(fmt.Errorf("%s is %q: want an absolute path", name, dir))
		return ""
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		e.Add(fmt.Errorf("%s is %q, which is not a directory", name, dir))
		return ""
	}
	return filepath.Clean(dir)
}
