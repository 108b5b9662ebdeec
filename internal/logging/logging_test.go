package logging_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/frognano/frognano/internal/logging"
)

// Example: a worker puts the run's logger in the context; whatever it calls logs through it.
func Example() {
	plain := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	run := plain.With(logging.RunID(12), logging.Repo("octo", "hello"))
	ctx := logging.WithLogger(context.Background(), run)

	logging.FromContextOr(ctx, plain).Warn("releasing the environment", logging.Err(errors.New("image in use")))
	logging.FromContextOr(context.Background(), plain).Info("no run here", logging.SandboxRun("local-1"))
	// Output:
	// level=WARN msg="releasing the environment" run_id=12 repo=octo/hello error="image in use"
	// level=INFO msg="no run here" sandbox_run=local-1
}

func TestFromContext(t *testing.T) {
	t.Parallel()
	own := slog.New(slog.DiscardHandler)
	if got := logging.FromContext(context.Background()); got != slog.Default() {
		t.Errorf("FromContext without a logger = %p, want slog.Default()", got)
	}
	if got := logging.FromContextOr(context.Background(), own); got != own {
		t.Errorf("FromContextOr without a logger = %p, want the fallback", got)
	}
	if got := logging.FromContextOr(logging.WithLogger(context.Background(), nil), own); got != own {
		t.Errorf("FromContextOr with a nil logger = %p, want the fallback", got)
	}
	carried := slog.New(slog.DiscardHandler)
	ctx := logging.WithLogger(context.Background(), carried)
	if got := logging.FromContextOr(ctx, own); got != carried {
		t.Errorf("FromContextOr = %p, want the context's %p", got, carried)
	}
	if got := logging.FromContext(ctx); got != carried {
		t.Errorf("FromContext = %p, want the context's %p", got, carried)
	}
}

// TestKeysKeepTheirTypes: each constructor gives its key one kind of value.
func TestKeysKeepTheirTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attr slog.Attr
		key  string
		kind slog.Kind
	}{
		{logging.DeliveryID("d"), "delivery_id", slog.KindString},
		{logging.InstallationID(1), "installation_id", slog.KindInt64},
		{logging.Repo("o", "r"), "repo", slog.KindString},
		{logging.Issue(3), "issue", slog.KindInt64},
		{logging.RunID(12), "run_id", slog.KindInt64},
		{logging.RunIDs([]int64{1, 2}), "run_ids", slog.KindAny},
		{logging.JobID(4), "job_id", slog.KindInt64},
		{logging.SandboxRun("run-12-a2"), "sandbox_run", slog.KindString},
		{logging.Err(errors.New("x")), "error", slog.KindAny},
	}
	for _, tt := range tests {
		if tt.attr.Key != tt.key || tt.attr.Value.Kind() != tt.kind {
			t.Errorf("attr %v: key %q kind %v, want %q %v", tt.attr, tt.attr.Key, tt.attr.Value.Kind(), tt.key, tt.kind)
		}
	}
	if got := logging.Repo("octo", "hello").Value.String(); got != "octo/hello" {
		t.Errorf("Repo = %q, want octo/hello", got)
	}
}
