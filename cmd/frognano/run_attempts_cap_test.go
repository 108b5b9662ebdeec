package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

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
