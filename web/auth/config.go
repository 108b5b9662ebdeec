package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/metrics"
)

// The variables of sign-in, as auth's refusals and log lines name them (GITHUB_URL is
// githubapp.EnvURL); package config declares and reads them.
const (
	EnvClientID     = "GITHUB_APP_CLIENT_ID"
	EnvClientSecret = "GITHUB_APP_CLIENT_SECRET"
	EnvWebToken     = "FROGNANO_WEB_TOKEN"
	EnvSessionKey   = "FROGNANO_SESSION_KEY"
	EnvPublicURL    = "FROGNANO_PUBLIC_URL"
)

// Defaults for Config fields left zero, and limits.
const (
	// DefaultSessionTTL is how long a session lasts. With OAuth it also ends when the
	// person's GitHub token expires (8 hours for a GitHub App's expiring user tokens).
	DefaultSessionTTL   = 8 * time.Hour
	DefaultReadCacheTTL = 5 * time.Minute
	// DefaultReadCacheSize bounds the remembered read checks (person and repository pairs).
	DefaultReadCacheSize = 10000
	DefaultHTTPTimeout   = 10 * time.Second

	// minTokenLength is the shortest FROGNANO_WEB_TOKEN accepted (the admin token's rule).
	minTokenLength = metrics.MinTokenLength
	// MinSessionKeyLength is the shortest FROGNANO_SESSION_KEY accepted, in characters; the
	// AES-256 key is derived from it with HKDF-SHA256.
	MinSessionKeyLength = 32

	// MaxFailedLogins wrong shared tokens from one address within FailedLoginWindow lock that
	// address out of sign-in until the window has passed.
	MaxFailedLogins   = 5
	FailedLoginWindow = 15 * time.Minute
)

// Config configures sign-in. Set ClientID and ClientSecret for OAuth, or Token for a shared
// access token; not both.
type Config struct {
	// PublicURL is frognano's address as browsers reach it (FROGNANO_PUBLIC_URL), such as
	// https://frognano.example.com. Required. Its scheme decides whether cookies are Secure
	// (https) and the OAuth callback is PublicURL+"/oauth/callback", which must be the
	// callback URL registered on the GitHub App.
	PublicURL string

	// GitHubURL is the GitHub web origin (GITHUB_URL; default https://github.com, or a GHES
	// host). Sign-in goes to its /login/oauth/…; the API is derived as githubapp derives it
	// (api.github.com, or /api/v3 on GHES).
	GitHubURL string
	// ClientID and ClientSecret are the GitHub App's OAuth credentials (GITHUB_APP_CLIENT_ID,
	// GITHUB_APP_CLIENT_SECRET). The secret is never logged.
	ClientID, ClientSecret string

	// Token is the shared access token (FROGNANO_WEB_TOKEN), at least 16 characters
	// (minTokenLength, the admin token's rule). Whoever holds it may read every
	// repository's runs.
	Token string

	// SessionKey (FROGNANO_SESSION_KEY, at least MinSessionKeyLength characters) encrypts and
	// authenticates the session cookies. Empty: a random key for this process, so sessions
	// end when it restarts (and are not shared between several frognano processes).
	SessionKey string

	// Pool is frognano's database, required by New: sign-outs are recorded in its
	// ended_sessions table (migration 0010), so that a signed-out session stays refused by
	// every frognano process on the database, after restarts too, until it would have expired.
	Pool *pgxpool.Pool

	SessionTTL    time.Duration // default DefaultSessionTTL
	ReadCacheTTL  time.Duration // default DefaultReadCacheTTL; how long a read check is remembered
	ReadCacheSize int           // default DefaultReadCacheSize

	// HTTPClient makes the requests to GitHub (default: one with DefaultHTTPTimeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock (default time.Now); tests move it to expire sessions and the cache.
	Now func() time.Time
}

// oauth reports whether c configures OAuth (rather than a shared token).
func (c Config) oauth() bool { return c.ClientID != "" || c.ClientSecret != "" }

// Validate reports the first problem with c, naming the environment variable to fix.
func (c Config) Validate() error {
	switch {
	case !c.oauth() && c.Token == "":
		return ErrNotConfigured
	case c.oauth() && c.Token != "":
		return fmt.Errorf("both %s and %s are set; set one way of signing in", EnvClientID, EnvWebToken)
	case c.oauth() && (c.ClientID == "" || c.ClientSecret == ""):
		return fmt.Errorf("sign-in with GitHub needs both %s and %s", EnvClientID, EnvClientSecret)
	case c.Token != "" && len(c.Token) < minTokenLength:
		return fmt.Errorf("%s must be at least %d characters", EnvWebToken, minTokenLength)
	case c.SessionKey != "" && len(c.SessionKey) < MinSessionKeyLength:
		return fmt.Errorf("%s must be at least %d characters (for example: openssl rand -hex 32)", EnvSessionKey, MinSessionKeyLength)
	case c.SessionTTL < 0 || c.ReadCacheTTL < 0 || c.ReadCacheSize < 0:
		return errors.New("session lifetime, read cache lifetime and size must not be negative")
	}
	if _, err := parsePublicURL(c.PublicURL); err != nil {
		return err
	}
	if c.oauth() {
		if _, _, err := c.githubEndpoints(); err != nil {
			return err
		}
	}
	return nil
}

// parsePublicURL checks PublicURL: an absolute http or https address without credentials,
// query or fragment, and no path: the pages live at the root of the host.
func parsePublicURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("%s must be set to the address browsers reach frognano at (such as https://frognano.example.com)", EnvPublicURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", EnvPublicURL, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		// The pages and their forms live at the root of the host (/login, /runs).
		return nil, fmt.Errorf("%s %q must be an http or https origin such as https://frognano.example.com (no path, credentials, query or fragment)", EnvPublicURL, raw)
	}
	u.Path, u.RawPath = "", ""
	return u, nil
}

// githubEndpoints returns the web origin (for /login/oauth/…) and the API base (with a
// trailing slash) of the configured GitHub.
func (c Config) githubEndpoints() (web, api string, err error) {
	gc := githubapp.Config{URL: c.GitHubURL}
	ep, err := gc.Endpoints()
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", githubapp.EnvURL, err)
	}
	web = strings.TrimRight(c.GitHubURL, "/")
	if web == "" {
		web = githubapp.DefaultURL
	}
	return web, ep.API, nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.ReadCacheTTL == 0 {
		c.ReadCacheTTL = DefaultReadCacheTTL
	}
	if c.ReadCacheSize == 0 {
		c.ReadCacheSize = DefaultReadCacheSize
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// New validates cfg and builds the Authenticator it configures: *OAuth, or the shared
// token's sign-in (FROGNANO_WEB_TOKEN).
func New(cfg Config) (Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Pool == nil {
		return nil, errors.New("sign-in needs the database (Config.Pool): sign-outs are recorded there")
	}
	cfg = cfg.withDefaults()
	jar, err := newJar(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.oauth() {
		return newOAuth(cfg, jar)
	}
	return newSharedToken(cfg, jar), nil
}
