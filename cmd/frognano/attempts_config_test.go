package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/sandbox"
)

func TestAttemptsConfig(t *testing.T) {
	t.Parallel()
	cfg, err := runnerConfig(envMap(map[string]string{
		"FROGNANO_ATTEMPTS": "4", "FROGNANO_MAX_ATTEMPTS": "6", "FROGNANO_ATTEMPTS_STOP_EARLY": "true",
		"FROGNANO_MODEL_CONCURRENCY": "3", "FROGNANO_MAX_SANDBOXES": "2",
	}))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Attempts
	if a.N != 4 || a.Max != 6 || !a.StopEarly || a.ModelLimiter == nil {
		t.Errorf("attempts = %+v", a)
	}
	if got := cfg.Sandbox.Slots.Cap(); got != 2 {
		t.Errorf("sandbox slots = %d, want FROGNANO_MAX_SANDBOXES=2", got)
	}
	def, err := runnerConfig(envMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	if def.Attempts.N != 1 || def.Attempts.Max != 8 || def.Attempts.StopEarly || def.Attempts.ModelLimiter == nil {
		t.Errorf("default attempts = %+v", def.Attempts)
	}
	if want := defaultMaxSandboxes(sandbox.HostMemory(), def.Sandbox.Memory); def.Sandbox.Slots.Cap() != want || want < 1 {
		t.Errorf("default sandbox slots = %d, want %d (host memory / sandbox memory, less one)", def.Sandbox.Slots.Cap(), want)
	}
	if _, err := runnerConfig(envMap(map[string]string{"FROGNANO_ATTEMPTS": "9"})); err == nil || !strings.Contains(err.Error(), "at most 8 (FROGNANO_MAX_ATTEMPTS)") {
		t.Errorf("9 attempts over the default cap: err = %v", err)
	}
	for _, tt := range []struct {
		host, sandbox int64
		want          int
	}{{16 << 30, 4 << 30, 3}, {4 << 30, 4 << 30, 1}, {0, 4 << 30, 0}, {64 << 30, 1 << 30, 63}} {
		if got := defaultMaxSandboxes(tt.host, tt.sandbox); got != tt.want {
			t.Errorf("defaultMaxSandboxes(%d, %d) = %d, want %d", tt.host, tt.sandbox, got, tt.want)
		}
	}
}

// TestRunCommandRefusesTooManyAttempts: --attempts over the operator's cap is a usage error,
// before anything starts.
func TestRunCommandRefusesTooManyAttempts(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", t.TempDir(), "--task", "x", "--out", t.TempDir(), "--attempts", "5"},
		envMap(map[string]string{"FROGNANO_MODEL_URL": "http://127.0.0.1:1/v1", "FROGNANO_MAX_ATTEMPTS": "4"}), &stdout, &stderr)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "5 attempts asked for; this host allows at most 4") {
		t.Fatalf("err = %v, want a usage error about the cap", err)
	}
}
