package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/metrics"
	"github.com/frognano/frognano/outcome"
	"github.com/frognano/frognano/queue"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/settings"
)

// Service is the whole service's configuration (`frognano serve`, `worker` and `doctor`),
// from the environment; the commands' flags override parts of it.
type Service struct {
	DatabaseURL     string
	WebhookSecret   []byte
	GitHub          githubapp.Config
	Addr            string
	Label           string
	AppSlug         string // FROGNANO_APP_SLUG; "": read from GitHub (GET /app) at start
	Workers         int
	AutoMigrate     bool
	ShutdownTimeout time.Duration
	ReapInterval    time.Duration // how often sandboxes of a dead predecessor are looked for
	LogLevel        slog.Level
	Queue           queue.Config
	// Outcomes configures the reconciliation of pull requests with GitHub (FROGNANO_OUTCOMES_*;
	// its interval is Queue.OutcomesInterval).
	Outcomes outcome.Config
	Runner   runner.Config
	Admin    Admin // FROGNANO_METRICS_ADDR, FROGNANO_ADMIN_TOKEN
	Web      Web   // FROGNANO_PUBLIC_URL and the run pages' sign-in (web.go)
}

// Admin is the admin listener's part of the service configuration.
type Admin struct {
	// MetricsAddr is FROGNANO_METRICS_ADDR: where /metrics (and /riverui) are served, apart
	// from the public webhook port. Empty: no admin listener.
	MetricsAddr string
	// AdminToken is FROGNANO_ADMIN_TOKEN: the token River's UI asks for. Empty: no UI.
	AdminToken string
}

// LoadService reads every setting of the service (withWeb: `serve`, which needs the webhook
// secret; else `worker`) and reports every problem at once. It never puts a secret's value in
// an error, and hands the service's secrets to the one redactor.
func LoadService(getenv func(string) string, withWeb bool) (Service, error) {
	e := newEnv(getenv)
	var cfg Service
	var errs []error
	cfg.DatabaseURL = databaseURL.get(e)
	if cfg.DatabaseURL == "" {
		errs = append(errs, fmt.Errorf("%s is not set (e.g. postgres://frognano@localhost:5432/frognano)", databaseURL.Name))
	} else if _, err := pgxpool.ParseConfig(cfg.DatabaseURL); err != nil {
		errs = append(errs, fmt.Errorf("%s is not a valid PostgreSQL connection string", databaseURL.Name))
	}
	if withWeb {
		cfg.WebhookSecret = []byte(webhookSecret.get(e))
		if len(cfg.WebhookSecret) == 0 {
			errs = append(errs, fmt.Errorf("%s is not set: refusing to accept unsigned webhooks", webhookSecret.Name))
		}
	}
	// Name the missing settings plainly before githubapp validates the values.
	switch {
	case strings.TrimSpace(appID.raw(e)) == "":
		errs = append(errs, fmt.Errorf("%s is not set (the App's numeric id)", appID.Name))
	case privateKey.raw(e) == "" && privateKeyFile.raw(e) == "":
		errs = append(errs, fmt.Errorf("%s or %s is not set (the App's RSA private key)", privateKey.Name, privateKeyFile.Name))
	default:
		gh, err := GitHubApp(getenv)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.GitHub = gh
	}
	// Each published run reports its tests as the check run `frognano / tests`; an App
	// created before it asked for checks: write can turn that off until it is updated.
	cfg.GitHub.ChecksWrite = checkRuns.get(e)
	cfg.Addr = addr.get(e)
	cfg.Label = label.get(e)
	cfg.AppSlug = appSlug.get(e)
	cfg.Admin = readAdmin(e)
	cfg.Workers = workers.get(e)
	cfg.AutoMigrate = autoMigrate.get(e)
	cfg.ShutdownTimeout = shutdownTimeout.get(e)
	cfg.ReapInterval = sandboxReapInterval.get(e)
	switch lvl := logLevel.get(e); lvl {
	case "debug":
		cfg.LogLevel = slog.LevelDebug
	case "info":
		cfg.LogLevel = slog.LevelInfo
	case "warn":
		cfg.LogLevel = slog.LevelWarn
	case "error":
		cfg.LogLevel = slog.LevelError
	default:
		errs = append(errs, fmt.Errorf("%s=%q is not debug, info, warn or error", logLevel.Name, lvl))
	}
	cfg.Queue = queue.Config{
		JobTimeout:           jobTimeout.get(e),
		PerInstallationLimit: perInstallation.get(e),
		SoftStopTimeout:      softStopTimeout.get(e),
		DeliveryRetention:    deliveryRetention.get(e),
		WorkDir:              workDir.or(e, os.TempDir()),
		Budgets:              readBudgets(e), // issue 22
	}
	cfg.Queue.OutcomesInterval = outcomesInterval.get(e) // 0: no periodic round
	cfg.Outcomes = readOutcomes(e)
	if cfg.Queue.DeliveryRetention < queue.MinDeliveryRetention {
		errs = append(errs, fmt.Errorf("%s must be at least %s (GitHub Enterprise redelivers for 7 days)", deliveryRetention.Name, queue.MinDeliveryRetention))
	}
	rcfg, err := Runner(getenv)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Runner = rcfg
	// Each process keeps its clones in a folder of its own, so that at start it can remove
	// what a crashed predecessor of the same owner left without touching another's.
	cfg.Queue.Owner = rcfg.Sandbox.Owner
	// A repository's settings file can lower these, never raise them (issue 30). Models: the
	// names every repository may use; the worker asks the runner for a repository's own.
	cfg.Queue.Ceilings = settings.Ceilings{Attempts: rcfg.Attempts.N, Models: rcfg.Models.Allowed(""),
		RunsPerDay: int(cfg.Queue.Budgets.RepoRuns)}
	cfg.Queue.Label = cfg.Label // a failed run removes it, so that labelling again retries
	if cfg.Queue.CIFollowUps = ciFollowUps.get(e); cfg.Queue.CIFollowUps == 0 {
		cfg.Queue.CIFollowUps = -1 // 0 turns CI follow-ups off; queue reads 0 as its default
	}
	cfg.Queue.WorkDir = filepath.Join(cfg.Queue.WorkDir, "frognano-"+SafeName(rcfg.Sandbox.Owner))
	if cfg.Web, err = readWeb(getenv); err != nil {
		errs = append(errs, err)
	}
	cfg.Queue.PublicURL = cfg.Web.PublicURL // links from comments, bodies and check runs
	protectServiceSecrets(cfg)
	errs = append(errs, e.Err())
	return cfg, errors.Join(errs...)
}

// protectServiceSecrets makes the service's own secrets secrets of the one redactor too (the
// runner's, setup's values and the model API key, are registered by Runner): none of them
// ever enters a sandbox, but an error that quoted one (a database URL with its password, a
// token in a refused request) must not reach a log, a comment or a stored error either.
func protectServiceSecrets(cfg Service) {
	secrets := []string{string(cfg.WebhookSecret), cfg.Admin.AdminToken, cfg.Web.Auth.ClientSecret, cfg.Web.Auth.Token, cfg.Web.Auth.SessionKey}
	if pc, err := pgxpool.ParseConfig(cfg.DatabaseURL); err == nil {
		secrets = append(secrets, pc.ConnConfig.Password)
	}
	for _, s := range secrets {
		githubapp.RegisterConfigSecret(s)
	}
}

// readAdmin reads the admin listener's settings; the token must be long enough for River's UI.
func readAdmin(e *env) Admin {
	c := Admin{MetricsAddr: metricsAddr.get(e), AdminToken: adminToken.get(e)}
	if c.AdminToken != "" && len(c.AdminToken) < metrics.MinTokenLength {
		e.Add(fmt.Errorf("%s must be at least %d characters", adminToken.Name, metrics.MinTokenLength))
	}
	return c
}

// GitHubApp reads the GitHub App's settings (the id, the key or its file, GITHUB_URL, the
// commit identity) and validates them (githubapp.Config.Validate). It reports every problem of
// reading them at once, never quoting the key.
func GitHubApp(getenv func(string) string) (githubapp.Config, error) {
	e := newEnv(getenv)
	var cfg githubapp.Config
	cfg.AppID = appID.get(e)
	cfg.PrivateKey = []byte(privateKey.get(e))
	if file := privateKeyFile.get(e); file != "" {
		if len(cfg.PrivateKey) > 0 {
			e.Add(fmt.Errorf("both %s and %s are set; set one", privateKey.Name, privateKeyFile.Name))
		} else if key, err := os.ReadFile(file); err != nil {
			e.Add(fmt.Errorf("reading %s: %w", privateKeyFile.Name, err))
		} else {
			cfg.PrivateKey = key
		}
	}
	cfg.URL = gitHubURL.get(e)
	cfg.CommitName = commitName.get(e)
	cfg.CommitEmail = commitEmail.get(e)
	if err := e.Err(); err != nil {
		return githubapp.Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return githubapp.Config{}, err
	}
	return cfg, nil
}

// GitHubURL is GITHUB_URL exactly as set ("" when unset: githubapp.DefaultURL), for
// `frognano setup`'s default.
func GitHubURL(getenv func(string) string) string { return gitHubURL.get(newEnv(getenv)) }

// DatabaseURL is DATABASE_URL without surrounding white space ("" when unset), for the
// commands that only open the database (migrate, runs, usage, budget).
func DatabaseURL(getenv func(string) string) string { return databaseURL.get(newEnv(getenv)) }

// APIClient reads FROGNANO_API_URL and FROGNANO_API_TOKEN, for `frognano runs start`: the
// service's address (http or https, no query) and the token; both are required.
func APIClient(getenv func(string) string) (baseURL, token string, err error) {
	e := newEnv(getenv)
	baseURL = strings.TrimRight(strings.TrimSpace(apiURL.get(e)), "/")
	token = apiToken.get(e)
	switch u, perr := url.Parse(baseURL); {
	case baseURL == "":
		e.Add(fmt.Errorf("%s is not set: the address of frognano serve, such as https://frognano.example.com", apiURL.Name))
	case perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil:
		e.Add(fmt.Errorf("%s must be an http or https address with no query or password", apiURL.Name))
	}
	if token == "" {
		e.Add(fmt.Errorf("%s is not set: make a token with `frognano tokens create`", apiToken.Name))
	}
	return baseURL, token, e.Err()
}

// Budgets reads the FROGNANO_BUDGET_* settings (run.Budgets; 0 or unset: no limit), for
// `frognano budget`, which shows them next to an installation's own.
func Budgets(getenv func(string) string) (runs.Budgets, error) {
	e := newEnv(getenv)
	b := readBudgets(e)
	return b, e.Err()
}

// Outcomes reads FROGNANO_OUTCOMES_MAX_AGE and FROGNANO_OUTCOMES_BUDGET, for `frognano outcomes
// sync`, which runs one reconciliation round at once.
func Outcomes(getenv func(string) string) (outcome.Config, error) {
	e := newEnv(getenv)
	c := readOutcomes(e)
	return c, e.Err()
}

func readOutcomes(e *env) outcome.Config {
	c := outcome.Config{MaxAge: outcomesMaxAge.get(e), Budget: outcomesBudget.get(e)}
	if c.MaxAge <= 0 {
		e.Add(fmt.Errorf("%s must be positive", outcomesMaxAge.Name))
	}
	if least := outcome.CostOpen + outcome.CostPull; c.Budget < least {
		e.Add(fmt.Errorf("%s must be at least %d (opening a repository and reading one pull request)", outcomesBudget.Name, least))
	}
	return c
}

func readBudgets(e *env) runs.Budgets {
	return runs.Budgets{
		InstallationRuns:   budgetInstallationRuns.get(e),
		InstallationTokens: budgetInstallationTokens.get(e),
		RepoRuns:           budgetRepoRuns.get(e),
		RepoTokens:         budgetRepoTokens.get(e),
	}
}

// SetupNetworks is FROGNANO_SETUP_NETWORK exactly as set ("" when unset), for `frognano
// docker-proxy`, which reads it as a comma-separated list of the networks sandboxes may join
// and leaves an empty one to its own default (the variable's, bridge).
func SetupNetworks(getenv func(string) string) string { return setupNetwork.raw(newEnv(getenv)) }

// SafeName keeps the letters, digits, dots and dashes of s, for a folder or file name.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "default"
	}
	return string(b)
}
