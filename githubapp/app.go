package githubapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// App is the GitHub App identity. It is safe for concurrent use; create one per process.
type App struct {
	cfg       Config
	endpoints Endpoints
	apps      *ghinstallation.AppsTransport

	mu      sync.Mutex
	buckets map[int64]*writeBucket // per installation, shared by all its Clients
}

// New validates cfg and builds the App. It makes no network request.
func New(cfg Config) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	endpoints, err := cfg.Endpoints()
	if err != nil {
		return nil, err
	}
	key, err := parsePrivateKey(cfg.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("creating GitHub App: %w", err)
	}
	apps := ghinstallation.NewAppsTransportFromPrivateKey(cfg.Transport, cfg.AppID, key)
	apps.BaseURL = endpoints.AppsAPI
	return &App{cfg: cfg, endpoints: endpoints, apps: apps, buckets: map[int64]*writeBucket{}}, nil
}

// Endpoints returns the addresses the App talks to.
func (a *App) Endpoints() Endpoints { return a.endpoints }

func (a *App) bucket(installationID int64) *writeBucket {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.buckets[installationID]
	if !ok {
		b = newWriteBucket(a.cfg.WritesPerSecond)
		a.buckets[installationID] = b
	}
	return b
}

// Client acts on one repository as one installation. It is safe for concurrent use.
type Client struct {
	app            *App
	installationID int64
	owner, repo    string
	tokens         *ghinstallation.Transport
	gh             *github.Client
	log            *slog.Logger
}

// ForRepo returns a Client whose installation tokens can reach only owner/repo, with only the
// permissions a run needs (contents, pull requests and issues: write; metadata: read; checks:
// write when Config.ChecksWrite). It fetches the first token now, so an installation that lost
// access to the repository fails here, before any work is done.
func (a *App) ForRepo(ctx context.Context, installationID int64, owner, repo string) (*Client, error) {
	if installationID <= 0 || owner == "" || repo == "" {
		return nil, fmt.Errorf("creating client: installation %d, repository %q/%q: all are required", installationID, owner, repo)
	}
	perms := &github.InstallationPermissions{
		Contents:     github.String("write"),
		PullRequests: github.String("write"),
		Issues:       github.String("write"),
		Metadata:     github.String("read"),
	}
	if a.cfg.ChecksWrite {
		perms.Checks = github.String("write")
	}
	tokens := ghinstallation.NewFromAppsTransport(a.apps, installationID)
	tokens.BaseURL = a.endpoints.AppsAPI
	tokens.InstallationTokenOptions = &github.InstallationTokenOptions{
		Repositories: []string{repo},
		Permissions:  perms,
	}
	rt := &retryTransport{next: tokens, cfg: a.cfg, writes: a.bucket(installationID)}
	gh := github.NewClient(&http.Client{Transport: rt, CheckRedirect: sameHostRedirect})
	var err error
	if gh.BaseURL, err = url.Parse(a.endpoints.API); err != nil {
		return nil, fmt.Errorf("creating client: parsing API URL: %w", err)
	}
	if gh.UploadURL, err = url.Parse(a.endpoints.Upload); err != nil {
		return nil, fmt.Errorf("creating client: parsing upload URL: %w", err)
	}
	c := &Client{
		app: a, installationID: installationID, owner: owner, repo: repo,
		tokens: tokens, gh: gh,
		log: a.cfg.Logger.With(slog.Int64("installation_id", installationID), slog.String("repo", owner+"/"+repo)),
	}
	if _, err := c.token(ctx); err != nil {
		return nil, mark(fmt.Errorf("creating client for %s/%s: %w", owner, repo, err))
	}
	return c, nil
}

// token returns a valid installation token (ghinstallation refreshes it a minute before expiry)
// and registers it for Redact.
func (c *Client) token(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	tok, err := c.tokens.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("getting installation token: %w", err)
	}
	RegisterSecret(tok)
	return tok, nil
}

// sameHostRedirect refuses redirects to another host: ghinstallation adds the token to every
// request it sends, including redirected ones, so a redirect off the API host would carry it.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
		return http.ErrUseLastResponse
	}
	return nil
}
