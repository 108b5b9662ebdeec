package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/web"
	"github.com/frognano/frognano/web/auth"
)

// webConfig is the run pages' configuration: FROGNANO_PUBLIC_URL (links from GitHub to the
// pages, and the sign-in's own address), and sign-in (web/auth: GITHUB_APP_CLIENT_ID and
// GITHUB_APP_CLIENT_SECRET, or FROGNANO_WEB_TOKEN; FROGNANO_SESSION_KEY).
type webConfig struct {
	// PublicURL is the pages' base address; "" puts no links in comments, bodies or check runs.
	PublicURL string
	// Auth configures sign-in; valid only when Off is "".
	Auth auth.Config
	// Off says why the pages are not served ("" : they are).
	Off string
}

// loadWebConfig reads the pages' settings. No sign-in configured turns the pages off (nothing
// of a run is public); a sign-in configured wrongly is an error.
func loadWebConfig(getenv func(string) string) (webConfig, error) {
	var c webConfig
	c.PublicURL = strings.TrimRight(strings.TrimSpace(getenv(auth.EnvPublicURL)), "/")
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return c, fmt.Errorf("%s must be the address browsers reach frognano at, such as https://frognano.example.com", auth.EnvPublicURL)
		}
	}
	ac, err := auth.ParseConfig(getenv)
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

// buildPages makes the run pages for the public server, or logs why there are none.
func (s *service) buildPages() error {
	wc := s.cfg.Web
	if wc.Off != "" {
		s.log.Info("run pages are off: "+wc.Off, "reason", "no sign-in configured")
		return nil
	}
	ac := wc.Auth
	ac.Logger = s.log
	ac.Pool = s.pool // sign-outs are recorded in the database, for every process
	a, err := auth.New(ac)
	if err != nil {
		return fmt.Errorf("run pages: %w", err)
	}
	pages, err := web.New(web.Config{Runs: runs.NewStore(s.pool, nil), Auth: a, Logger: s.log})
	if err != nil {
		return err
	}
	s.pages = pages
	s.log.Info("run pages on", "public_url", wc.PublicURL)
	return nil
}

// withPages serves the run pages and sign-in next to the webhook and health endpoints of
// srv's handler; srv's Shutdown ends the pages' open event streams.
func (s *service) withPages(srv *http.Server, h http.Handler) http.Handler {
	if s.pages == nil {
		return h
	}
	srv.RegisterOnShutdown(s.pages.Close)
	r := chi.NewRouter()
	s.pages.Routes(r)
	r.Handle("/*", h)
	return r
}
