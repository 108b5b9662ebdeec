package leaf

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunLogsThroughTheContextLogger: a logger the context carries (the run's, with its
// attributes) receives Run's retry and exit events instead of Config.Logger.
func TestRunLogsThroughTheContextLogger(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "retry-429.json"))
	var runLog bytes.Buffer
	ctx := logging.WithLogger(context.Background(),
		slog.New(slog.NewTextHandler(&lockedWriter{w: &runLog}, nil)).With(logging.SandboxRun("run-12-a2")))
	if r := Run(ctx, b.cfg, "task", b.tools, nil); r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	out := runLog.String()
	for _, want := range []string{`msg="retrying model request"`, `msg="leaf run ended"`, "sandbox_run=run-12-a2"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's log lacks %q: %s", want, out)
		}
	}
	if b.log.Len() != 0 {
		t.Errorf("Config.Logger got lines the context's logger should have: %s", b.log)
	}
}
