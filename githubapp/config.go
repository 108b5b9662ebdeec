package githubapp

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	secretscan "github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/fault"
)

// Defaults for Config fields left zero.
const (
	DefaultURL              = "https://github.com"
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultWritesPerSecond  = 1.0
	DefaultGitTimeout       = 10 * time.Minute
	DefaultMaxRateLimitWait = 5 * time.Minute
	DefaultMaxRetries       = 3
	// The half of a custom commit identity the operator left unset (Config.CommitName).
	DefaultCommitName  = "frognano[bot]"
	DefaultCommitEmail = "frognano[bot]@users.noreply.github.com"
)

// The variables of the App's settings, as githubapp's texts name them (explain.go); package
// config declares and reads them.
const (
	EnvAppID          = "GITHUB_APP_ID"
	EnvPrivateKey     = "GITHUB_APP_PRIVATE_KEY"      // the PEM itself
	EnvPrivateKeyFile = "GITHUB_APP_PRIVATE_KEY_FILE" // or a file holding it
	EnvURL            = "GITHUB_URL"
	EnvCommitName     = "FROGNANO_COMMIT_NAME"
	EnvCommitEmail    = "FROGNANO_COMMIT_EMAIL"
)

// Config says which GitHub App to act as and where GitHub is. The zero values of the optional
// fields mean the defaults above.
type Config struct {
	AppID      int64
	PrivateKey []byte // RSA key, PEM (PKCS#1 or PKCS#8); never logged

	// URL is the GitHub web address: "https://github.com" or a GHES host such as
	// "https://ghe.example.com". The API, upload and git addresses are derived from it
	// (see Endpoints). Plain http is accepted only for loopback hosts, which is what tests use.
	URL string

	HTTPTimeout      time.Duration // per attempt of every API request
	GitTimeout       time.Duration // per git command (clone, push)
	WritesPerSecond  float64       // per installation, for POST/PATCH/PUT/DELETE
	MaxRateLimitWait time.Duration // longest wait for one rate-limit answer before giving up
	MaxRetries       int           // retries of 5xx / network errors / rate limits per request

	// ChecksWrite adds checks: write to the installation token (for check runs).
	ChecksWrite bool

	// AllowWorkflowChanges lets Publish push changes under .github/workflows/ and
	// .github/actions/ (the operator's FROGNANO_ALLOW_WORKFLOW_CHANGES); off, Publish refuses
	// a tree that changes them, whatever the caller checked before.
	AllowWorkflowChanges bool

	// Secrets is what Publish does with a patch in which check/secrets (gitleaks' default
	// rules over every line the patched tree adds) finds a secret (the operator's
	// FROGNANO_SECRETS): Block, also "", refuses it for good with a *SecretsError and
	// pushes nothing, whatever the caller checked before; Warn pushes it (the runner
	// has listed the findings).
	Secrets secretscan.Mode

	// CommitName and CommitEmail (FROGNANO_COMMIT_NAME/EMAIL) are the author and committer of
	// Publish's commits. Both empty (the default): the commits carry none, so GitHub makes the
	// App's bot their author and signs them (Verified). Set: GitHub does not sign them, and a
	// ruleset that requires signed commits refuses them. One set alone: the other is
	// DefaultCommitName or DefaultCommitEmail.
	CommitName, CommitEmail string

	// Audit, when set, records every write attempted on behalf of a run (WithAuditRun), with
	// its outcome, by the installation clients' transport (audit.go).
	Audit AuditSink

	// Transport is the base transport for API calls (default http.DefaultTransport).
	Transport http.RoundTripper
	// Logger receives githubapp's log lines (default slog.Default()), always through
	// RedactLogs: a plain logger is wrapped.
	Logger *slog.Logger

	// Now and Sleep are the clock; tests replace them to observe waits without waiting.
	// Sleep must return ctx.Err() when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Validate reports the first problem with c: AppID <= 0, a key that is not an RSA PEM, or a URL
// that is not a bare https origin.
func (c Config) Validate() error {
	if c.AppID <= 0 {
		return fmt.Errorf("validating GitHub App config: app id must be positive, got %d", c.AppID)
	}
	if _, err := parsePrivateKey(c.PrivateKey); err != nil {
		return fmt.Errorf("validating GitHub App config: %w", err)
	}
	if _, err := c.Endpoints(); err != nil {
		return fmt.Errorf("validating GitHub App config: %w", err)
	}
	if c.HTTPTimeout < 0 || c.GitTimeout < 0 || c.WritesPerSecond < 0 || c.MaxRateLimitWait < 0 || c.MaxRetries < 0 {
		return errors.New("validating GitHub App config: timeouts, rates and retries must not be negative")
	}
	return nil
}

// parsePrivateKey accepts exactly what GitHub hands out (PKCS#1) and what key tools often convert
// it to (PKCS#8). Error messages never include key material.
func parsePrivateKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	if len(pemBytes) == 0 {
		return nil, errors.New("private key is empty")
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("private key is not PEM encoded")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing PKCS#1 private key: %w", err)
		}
		return key, nil
	case "PRIVATE KEY":
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing PKCS#8 private key: %w", err)
		}
		rsaKey, ok := key.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("private key is %T, GitHub Apps use RSA", key)
		}
		return rsaKey, nil
	default:
		return nil, fmt.Errorf("PEM block is %q, want an RSA private key", block.Type)
	}
}

// Endpoints are the addresses derived from Config.URL.
type Endpoints struct {
	API     string // go-github BaseURL, with a trailing slash
	Upload  string // go-github UploadURL, with a trailing slash
	Git     string // prefix of clone URLs: Git + "owner/repo.git"
	AppsAPI string // ghinstallation BaseURL: scheme and host (and /api/v3 on GHES), no trailing slash
}

// Endpoints derives the API, upload and git addresses from c.URL (default github.com).
// github.com has its own API host; a GHES host serves the API under /api/v3.
func (c Config) Endpoints() (Endpoints, error) {
	raw := c.URL
	if raw == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoints{}, fmt.Errorf("parsing GitHub URL: %w", err)
	}
	if u.Host == "" || u.Hostname() == "" {
		return Endpoints{}, fmt.Errorf("GitHub URL %q has no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return Endpoints{}, fmt.Errorf("GitHub URL %q must be an origin like https://ghe.example.com (no path, query or credentials)", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		// Tokens must not travel in clear text; plain http is for the in-process fake only.
		if !isLoopback(u.Hostname()) {
			return Endpoints{}, fmt.Errorf("GitHub URL %q must use https", raw)
		}
	default:
		return Endpoints{}, fmt.Errorf("GitHub URL %q must use https", raw)
	}
	origin := u.Scheme + "://" + u.Host
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "github.com" || host == "www.github.com":
		return Endpoints{
			API:     "https://api.github.com/",
			Upload:  "https://uploads.github.com/",
			Git:     "https://github.com/",
			AppsAPI: "https://api.github.com",
		}, nil
	case strings.HasSuffix(host, ".ghe.com"):
		// GitHub Enterprise Cloud with data residency: the API has its own host, like github.com.
		return Endpoints{
			API:     u.Scheme + "://api." + u.Host + "/",
			Upload:  u.Scheme + "://uploads." + u.Host + "/",
			Git:     origin + "/",
			AppsAPI: u.Scheme + "://api." + u.Host,
		}, nil
	default:
		return Endpoints{
			API:     origin + "/api/v3/",
			Upload:  origin + "/api/uploads/",
			Git:     origin + "/",
			AppsAPI: origin + "/api/v3",
		}, nil
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withDefaults fills the zero optional fields.
func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.HTTPTimeout == 0 {
		c.HTTPTimeout = DefaultHTTPTimeout
	}
	if c.GitTimeout == 0 {
		c.GitTimeout = DefaultGitTimeout
	}
	if c.WritesPerSecond == 0 {
		c.WritesPerSecond = DefaultWritesPerSecond
	}
	if c.MaxRateLimitWait == 0 {
		c.MaxRateLimitWait = DefaultMaxRateLimitWait
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.Transport == nil {
		c.Transport = http.DefaultTransport
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// Whatever logger it is given, githubapp logs through the redactor: its lines quote
	// GitHub's answers and git's errors, and it is handed plain loggers too (tests, doctor).
	c.Logger = slog.New(RedactLogs(c.Logger.Handler()))
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = fault.Wait
	}
	return c
}
