package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/frognano/frognano/web/auth"
)

// Web is the run pages' configuration: FROGNANO_PUBLIC_URL (links from GitHub to the pages,
// and the sign-in's own address), and sign-in (web/auth: GITHUB_APP_CLIENT_ID and
// GITHUB_APP_CLIENT_SECRET, or FROGNANO_WEB_TOKEN; FROGNANO_SESSION_KEY).
type Web struct {
	// PublicURL is the pages' base address; "" puts no links in comments, bodies or check runs.
	PublicURL string
	// Auth configures sign-in; valid only when Off is "".
	Auth auth.Config
	// Off says why the pages are not served ("" : they are).
	Off string
}

// readWeb reads the pages' settings. No sign-in configured turns the pages off (nothing of a
// run is public); a sign-in configured wrongly is an error.
func readWeb(getenv func(string) string) (Web, error) {
	var c Web
	c.PublicURL = strings.TrimRight(strings.TrimSpace(publicURL.get(newEnv(getenv))), "/")
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return c, fmt.Errorf("%s must be the address browsers reach frognano at, such as https://frognano.example.com", publicURL.Name)
		}
	}
	ac, err := signIn(getenv)
	switch {
	case errors.Is(err, auth.ErrNotConfigured):
		c.Off = err.Error()
		return c, nil
	case err != nil:
		return c, fmt.Errorf("run pages: %w", err)
	}
	c.Auth = ac
	return c, nil
}

// signIn reads the run pages' sign-in (the secrets are never quoted) and validates it
// (auth.Config.Validate): auth.ErrNotConfigured when neither OAuth nor a shared token is set,
// and any other problem as an error naming the variable.
func signIn(getenv func(string) string) (auth.Config, error) {
	e := newEnv(getenv)
	cfg := auth.Config{
		PublicURL: publicURL.get(e), GitHubURL: gitHubURL.get(e),
		ClientID: clientID.get(e), ClientSecret: clientSecret.get(e),
		Token: webToken.get(e), SessionKey: sessionKey.get(e),
	}
	if err := e.Err(); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}
