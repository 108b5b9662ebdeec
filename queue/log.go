package queue

import (
	"context"
	"log/slog"
)

// Attribute keys shared by every frognano log line about a delivery or run.
const (
	AttrDeliveryID     = "delivery_id"
	AttrInstallationID = "installation_id"
	AttrRepo           = "repo"
	AttrIssue          = "issue"
	AttrRunID          = "run_id"
	AttrJobID          = "job_id"
)

type loggerKey struct{}

// WithLogger returns ctx carrying l.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// Logger returns the logger carried by ctx, or slog.Default().
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.Default()
}
