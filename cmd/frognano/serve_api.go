package main

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/api"
	"github.com/frognano/frognano/githubapp"
	runs "github.com/frognano/frognano/run"
)

// buildAPI makes the API for automation (/api/v1, docs/api.md) for the public server. It has a
// GitHub App client of its own: a `serve --workers 0` process has no other, and the API asks
// GitHub which installation has a repository a request names.
func (s *service) buildAPI() error {
	ghcfg := s.cfg.GitHub
	ghcfg.Logger = s.log
	app, err := githubapp.New(ghcfg)
	if err != nil {
		return fmt.Errorf("the API: configuring the GitHub App: %w", err)
	}
	a, err := api.New(api.Config{Tokens: api.NewTokens(s.pool), Intake: s.queue, Repos: app, Runs: runs.NewStore(s.pool, nil),
		PublicURL: s.cfg.Web.PublicURL, Logger: s.log})
	if err != nil {
		return err
	}
	s.api = a
	return nil
}

// withAPI serves /api/v1 next to whatever h serves.
func (s *service) withAPI(h http.Handler) http.Handler {
	r := chi.NewRouter()
	s.api.Routes(r)
	r.Handle("/*", h)
	return r
}
