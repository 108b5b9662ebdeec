package githubapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
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
	// sentTransport is the base of every request, so that the audit trail can tell a write
	// that got no answer from one that never left (audit.go).
	apps := ghinstallation.NewAppsTransportFromPrivateKey(&sentTransport{next: cfg.Transport}, cfg.AppID, key)
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
	grants         Grants
	log            *slog.Logger
}

// ForRepo returns a Client whose installation tokens can reach only owner/repo, with only the
// permissions a run needs and the installation has granted (Grants.tokenPermissions: the core
// permissions, and checks: write when Config.ChecksWrite and granted). It reads the
// installation's grants each time, so an installation that approves the App's new permissions
// gets what they allow on its next run, without a restart. It fetches the first token now, so an
// installation that lost access to the repository fails here, before any work is done; a token
// request refused because the grants changed meanwhile (422) is asked again once with the new
// ones. A client is returned even when a core permission is missing (Grants.MissingCore), so the
// caller can still say so where the installation allows.
func (a *App) ForRepo(ctx context.Context, installationID int64, owner, repo string) (*Client, error) {
	return a.ForRepository(ctx, installationID, 0, owner, repo)
}

// ForRepository is ForRepo for the repository with id repoID (0: by its name alone). Its
// tokens are asked for by id, and the client acts on the repository's current name (GET
// /repositories/{id}): a repository renamed or transferred between the label and the run is
// the same repository, and its run goes ahead under the new name, where asking by the old name
// would be refused (422) and git, which follows no redirect, would find nothing there.
func (a *App) ForRepository(ctx context.Context, installationID, repoID int64, owner, repo string) (*Client, error) {
	if installationID <= 0 || owner == "" || repo == "" {
		return nil, fmt.Errorf("creating client: installation %d, repository %q/%q: all are required", installationID, owner, repo)
	}
	for try := 0; ; try++ {
		c, err := a.forRepo(ctx, installationID, repoID, owner, repo)
		if errors.Is(err, errPermissionsChanged) && try == 0 {
			continue
		}
		return c, err
	}
}

func (a *App) forRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (*Client, error) {
	grants, err := a.Installation(ctx, installationID)
	if err != nil {
		return nil, err
	}
	if grants.Suspended {
		return nil, fault.Permanent(&SuspendedError{Installation: installationID, Account: grants.Account})
	}
	perms, err := installationPermissions(grants.tokenPermissions(a.cfg.ChecksWrite))
	if err != nil {
		return nil, err
	}
	opts := &github.InstallationTokenOptions{Repositories: []string{repo}, Permissions: perms}
	if repoID > 0 {
		opts = &github.InstallationTokenOptions{RepositoryIDs: []int64{repoID}, Permissions: perms}
	}
	tokens, gh, err := a.tokenClient(installationID, opts)
	if err != nil {
		return nil, err
	}
	c := &Client{
		app: a, installationID: installationID, owner: owner, repo: repo,
		tokens: tokens, gh: gh, grants: grants,
		log: a.cfg.Logger.With(logging.InstallationID(installationID), logging.Repo(owner, repo)),
	}
	if _, err := c.token(ctx); err != nil {
		var he *ghinstallation.HTTPError
		if errors.As(err, &he) && he.Response != nil && he.Response.StatusCode == http.StatusUnprocessableEntity {
			err = fmt.Errorf("%w: %w", errPermissionsChanged, err)
		}
		return nil, mark(fmt.Errorf("creating client for %s/%s: %w", owner, repo, err))
	}
	if repoID > 0 {
		if err := c.followRename(ctx, repoID); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// tokenClient returns a GitHub API client whose requests carry installation tokens asked with
// opts (the repositories and permissions they reach), through the retries, the write bucket
// and the audit of every client of the App.
func (a *App) tokenClient(installationID int64, opts *github.InstallationTokenOptions) (*ghinstallation.Transport, *github.Client, error) {
	tokens := ghinstallation.NewFromAppsTransport(a.apps, installationID)
	tokens.BaseURL = a.endpoints.AppsAPI
	tokens.InstallationTokenOptions = opts
	var rt http.RoundTripper = &retryTransport{next: tokens, cfg: a.cfg, writes: a.bucket(installationID)}
	if a.cfg.Audit != nil {
		rt = &auditTransport{next: rt, sink: a.cfg.Audit, log: a.cfg.Logger, now: a.cfg.Now}
	}
	gh := github.NewClient(&http.Client{Transport: rt, CheckRedirect: sameHostRedirect})
	var err error
	if gh.BaseURL, err = url.Parse(a.endpoints.API); err != nil {
		return nil, nil, fmt.Errorf("creating client: parsing API URL: %w", err)
	}
	if gh.UploadURL, err = url.Parse(a.endpoints.Upload); err != nil {
		return nil, nil, fmt.Errorf("creating client: parsing upload URL: %w", err)
	}
	return tokens, gh, nil
}

// followRename points c at repository repoID's current name, when it was renamed or transferred
// since its owner and name were recorded.
func (c *Client) followRename(ctx context.Context, repoID int64) error {
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	r, _, err := c.gh.Repositories.GetByID(ctx, repoID)
	if err != nil {
		return mark(fmt.Errorf("reading repository %d (%s/%s): %w", repoID, c.owner, c.repo, err))
	}
	if owner, name := r.GetOwner().GetLogin(), r.GetName(); owner != "" && name != "" && (owner != c.owner || name != c.repo) {
		c.log.InfoContext(ctx, "the repository was renamed or transferred; acting on its current name", "now", owner+"/"+name)
		c.owner, c.repo = owner, name
		c.log = c.app.cfg.Logger.With(logging.InstallationID(c.installationID), logging.Repo(owner, name))
	}
	return nil
}

// Grants returns what the client's installation granted when the client was made.
func (c *Client) Grants() Grants { return c.grants }

// ChecksOn reports whether the client reports check runs: the operator wants them
// (Config.ChecksWrite) and the installation granted checks: write.
func (c *Client) ChecksOn() bool { return c.app.cfg.ChecksWrite && c.grants.Has("checks", "write") }

// ChecksWanted reports whether the operator wants check runs (Config.ChecksWrite), granted or not.
func (c *Client) ChecksWanted() bool { return c.app.cfg.ChecksWrite }

// installationPermissions turns a permission map into go-github's request struct.
func installationPermissions(m map[string]string) (*github.InstallationPermissions, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	p := &github.InstallationPermissions{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("asking for permissions %v: %w", m, err)
	}
	return p, nil
}

// SuspendedError: the App is suspended on the installation (by its owner or by GitHub); nothing
// can be done there until it is unsuspended.
type SuspendedError struct {
	Installation int64
	Account      string
}

func (e *SuspendedError) Error() string {
	return fmt.Sprintf("the App is suspended on installation %d (%s): unsuspend it in the account's settings, under GitHub Apps", e.Installation, e.Account)
}

// token returns a valid installation token (ghinstallation refreshes it a minute before expiry)
// and registers it for Redact.
func (c *Client) token(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	tok, err := c.tokens.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("getting installation token: %w", tokenRefusal(c.installationID, err))
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
