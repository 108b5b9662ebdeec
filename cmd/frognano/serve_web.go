package main

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web"
	"github.com/frognano/frognano/web/auth"
)

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
	pages, err := web.New(web.Config{Runs: runs.NewStore(s.pool, nil), Stats: stats.NewStore(s.pool), Auth: a, Logger: s.log})
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
