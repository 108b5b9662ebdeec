package main

import (
	"context"
	"net/http"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/metrics"
)

// instrument points the service's outbound clients at m's instruments: every GitHub request
// and wait, every model request, every sandbox's start, every environment reused or built. It runs before the clients are built.
func instrument(cfg *config.Service, m *metrics.Metrics) {
	cfg.GitHub.Transport = m.GitHubTransport(cfg.GitHub.Transport)
	cfg.GitHub.Sleep = m.GitHubSleep(cfg.GitHub.Sleep)
	cfg.Runner.Sandbox.Ready = m.ObserveSandboxReady
	cfg.Runner.Env.Observe = m.EnvironmentCache
	l := &cfg.Runner.Leaf
	if l.HTTPClient == nil {
		// leaf's own default: one client with the request timeout.
		l.HTTPClient = &http.Client{Timeout: l.RequestTimeout}
	}
	hc := *l.HTTPClient
	hc.Transport = m.ModelTransport(hc.Transport)
	l.HTTPClient = &hc
}

// startAdmin starts the admin listener when FROGNANO_METRICS_ADDR is set: /metrics with the
// database collector, and River's UI behind FROGNANO_ADMIN_TOKEN.
func (s *service) startAdmin(ctx context.Context) error {
	if s.cfg.Admin.MetricsAddr == "" {
		return nil
	}
	s.metrics.Registry().MustRegister(metrics.NewDatabase(s.pool, s.log), metrics.NewUsage(s.pool, s.log))
	a, err := s.metrics.StartAdmin(ctx, metrics.AdminConfig{
		Addr: s.cfg.Admin.MetricsAddr, Token: s.cfg.Admin.AdminToken, River: s.queue.River(), Logger: s.log,
	})
	if err != nil {
		return setupError{err}
	}
	s.admin = a
	return nil
}

func (s *service) stopAdmin() {
	if s.admin != nil {
		if err := s.admin.Close(); err != nil {
			s.log.Warn("stopping the metrics listener", logging.Err(err))
		}
	}
}
