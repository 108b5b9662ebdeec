package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunCommandSaysItWaitsForTheModel: `frognano run` against a model server that first
// answers 429 with Retry-After prints that it waits for the model server, then that the
// server answers again, and the run goes on to its fix.
func TestRunCommandSaysItWaitsForTheModel(t *testing.T) {
	t.Parallel()
	s := leaftest.LoadModel(t, "e2e-pyaverage.json")
	busy := leaftest.Turn{Status: 429, RetryAfter: "1", ErrorBody: `{"error":{"message":"Too many requests","type":"rate_limit"}}`}
	s.Turns = append([]leaftest.Turn{busy}, s.Turns...)
	model := leaftest.NewServer(t, s)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--task", "Fix the failing test.",
		"--out", filepath.Join(t.TempDir(), "out"), "--executor", cliExecutor(t)},
		envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	wait := strings.Index(log, "waiting for the model server: 429, retrying in 1 s\n")
	again := strings.Index(log, "the model server answers again\n")
	step := strings.Index(log, "step   1/100")
	if wait < 0 || again < wait || step < again || !strings.Contains(log, "finished: exit reason agent after 5 steps") {
		t.Errorf("stderr does not say the run waited for the model, then went on:\n%s", log)
	}
}
