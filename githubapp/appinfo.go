package githubapp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// RequiredPermissions are the App permissions the service needs, all of them: it reads and
// pushes the repository (contents), comments on and reacts to issues (issues), opens draft
// pull requests (pull_requests), and with checks (FROGNANO_CHECK_RUNS, the default) reports the
// tests as check runs; metadata is implied. `frognano setup` puts exactly these (with checks)
// in the App manifest, `frognano doctor` compares the App's permissions with them, and ForRepo
// asks each installation token for the same set (TestForRepoAsksForRequiredPermissions).
func RequiredPermissions(checks bool) map[string]string {
	p := map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"}
	if checks {
		p["checks"] = "write"
	}
	return p
}

// RequiredEvents are the webhook events the App must subscribe to: issues (the label);
// issue_comment, pull_request_review and pull_request_review_comment (a reviewer's @APP,
// requested changes or a line comment on a frognano pull request); check_suite (the
// repository's CI failing on a frognano pull request). `installation` and
// `installation_repositories` need no subscription: GitHub sends them to every App.
func RequiredEvents() []string {
	return []string{"issues", "issue_comment", "pull_request_review", "pull_request_review_comment", "check_suite"}
}

// OptionalEvents are the webhook events the App subscribes to that frognano can do without:
// pull_request (what became of the pull requests runs published to: merged, closed, marked
// ready, pushed to). Without it, reconciliation (package outcome) finds the same from GitHub's
// API, later; `frognano doctor` says what to approve.
func OptionalEvents() []string { return []string{"pull_request"} }

// ManifestEvents are the events the App manifest (and `frognano setup`) subscribes to:
// RequiredEvents, then OptionalEvents.
func ManifestEvents() []string { return append(RequiredEvents(), OptionalEvents()...) }

var permissionLevels = map[string]int{"": 0, "none": 0, "read": 1, "write": 2, "admin": 3}

// MissingPermissions names, sorted, each required permission that have grants at a lower
// level than want ("issues: read, needs write"), or not at all.
func MissingPermissions(have, want map[string]string) []string {
	var missing []string
	for name, level := range want {
		if permissionLevels[have[name]] < permissionLevels[level] {
			got := have[name]
			if got == "" {
				got = "none"
			}
			missing = append(missing, fmt.Sprintf("%s: %s, needs %s", name, got, level))
		}
	}
	sort.Strings(missing)
	return missing
}

// MissingEvents names, sorted, each event of want that have lacks.
func MissingEvents(have, want []string) []string {
	var missing []string
	for _, e := range want {
		if !slices.Contains(have, e) {
			missing = append(missing, e)
		}
	}
	sort.Strings(missing)
	return missing
}

// AppInfo is what GitHub says about the App itself (GET /app).
type AppInfo struct {
	ID          int64             `json:"id"`
	Slug        string            `json:"slug"`
	Name        string            `json:"name"`
	HTMLURL     string            `json:"html_url"`
	Permissions map[string]string `json:"permissions"`
	Events      []string          `json:"events"`
}

// Installation is one installation of the App (GET /app/installations).
type Installation struct {
	ID                  int64                  `json:"id"`
	Account             struct{ Login string } `json:"account"`
	RepositorySelection string                 `json:"repository_selection"`
	Permissions         map[string]string      `json:"permissions"`
	Events              []string               `json:"events"`
	SuspendedAt         *string                `json:"suspended_at"`
}

// appClient is a go-github client authenticated as the App itself (a JWT), for the /app
// endpoints. It goes through the same retry transport as installation clients.
func (a *App) appClient() (*github.Client, error) {
	rt := &retryTransport{next: a.apps, cfg: a.cfg, writes: a.bucket(0)}
	gh := github.NewClient(&http.Client{Transport: rt, CheckRedirect: sameHostRedirect})
	var err error
	if gh.BaseURL, err = url.Parse(a.endpoints.API); err != nil {
		return nil, fmt.Errorf("parsing API URL: %w", err)
	}
	return gh, nil
}

// Self returns the App as GitHub sees it. It is the cheapest proof that the App id and the
// private key belong together: GitHub answers 401 to a JWT it cannot verify.
func (a *App) Self(ctx context.Context) (AppInfo, error) {
	var info AppInfo
	if err := a.appGet(ctx, "app", &info); err != nil {
		return AppInfo{}, fmt.Errorf("getting the App: %w", err)
	}
	return info, nil
}

// Installations lists the App's installations (the first 100).
func (a *App) Installations(ctx context.Context) ([]Installation, error) {
	var list []Installation
	if err := a.appGet(ctx, "app/installations?per_page=100", &list); err != nil {
		return nil, fmt.Errorf("listing the App's installations: %w", err)
	}
	return list, nil
}

func (a *App) appGet(ctx context.Context, path string, v any) error {
	gh, err := a.appClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.HTTPTimeout*time.Duration(a.cfg.MaxRetries+1))
	defer cancel()
	req, err := gh.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if _, err := gh.Do(ctx, req, v); err != nil {
		return err
	}
	return nil
}

// HTTPStatus is the HTTP status GitHub answered a failed call with, or 0 when it did not
// answer (a network error, a timeout).
func HTTPStatus(err error) int { return statusCode(err) }

// ManifestApp is what GitHub hands back once, when an App created from a manifest is
// converted (POST /app-manifests/{code}/conversions). Its secrets must never be printed.
type ManifestApp struct {
	ID            int64  `json:"id"`
	Slug          string `json:"slug"`
	Name          string `json:"name"`
	HTMLURL       string `json:"html_url"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
	PEM           string `json:"pem"`
	Owner         struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// ConvertManifest exchanges the temporary code of the manifest flow for the new App's id,
// slug and credentials. The request carries no credential (the code is the proof); the API
// address comes from c.URL (github.com's API host, or /api/v3 on GitHub Enterprise Server).
func ConvertManifest(ctx context.Context, c Config, code string) (ManifestApp, error) {
	if code == "" || strings.ContainsAny(code, "/?#% ") {
		return ManifestApp{}, fmt.Errorf("converting the App manifest: the code %q is not one GitHub hands out", code)
	}
	c = c.withDefaults()
	ep, err := c.Endpoints()
	if err != nil {
		return ManifestApp{}, err
	}
	gh := github.NewClient(&http.Client{Transport: c.Transport, Timeout: c.HTTPTimeout, CheckRedirect: sameHostRedirect})
	if gh.BaseURL, err = url.Parse(ep.API); err != nil {
		return ManifestApp{}, fmt.Errorf("parsing API URL: %w", err)
	}
	req, err := gh.NewRequest(http.MethodPost, "app-manifests/"+url.PathEscape(code)+"/conversions", nil)
	if err != nil {
		return ManifestApp{}, err
	}
	var app ManifestApp
	if _, err := gh.Do(ctx, req, &app); err != nil {
		return ManifestApp{}, fmt.Errorf("converting the App manifest: %w", err)
	}
	if app.ID <= 0 || app.PEM == "" || app.WebhookSecret == "" {
		return ManifestApp{}, fmt.Errorf("converting the App manifest: GitHub's answer lacks the App id, key or webhook secret")
	}
	// Secrets for the process's life, never evicted like tokens.
	RegisterConfigSecret(app.ClientSecret)
	RegisterConfigSecret(app.WebhookSecret)
	return app, nil
}
