package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunCommandSaysItWaitsForASandbox: `frognano run` with FROGNANO_MAX_SANDBOXES=1 prints
// that the tests before wait for a free sandbox while the agent's holds the slot (the model's
// first answer is held until stderr says so), then that a sandbox is free for them, and the
// run goes on to its fix.
func TestRunCommandSaysItWaitsForASandbox(t *testing.T) {
	t.Parallel()
	model := leaftest.NewServer(t, leaftest.LoadModel(t, "e2e-pyaverage.json"))
	const waitLine = "waiting for a free sandbox for the tests before (1 of 1 in use, FROGNANO_MAX_SANDBOXES)\n"
	var stderr svcBuffer
	held := svcGateModel(t, model.URL, 1, "stderr saying the tests before wait for a sandbox", func() (bool, string) {
		log := stderr.String()
		return strings.Contains(log, waitLine), log
	}, nil)
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--task", "Fix the failing test.",
		"--out", filepath.Join(t.TempDir(), "out"), "--executor", cliExecutor(t)},
		envMap(map[string]string{"FROGNANO_MODEL_URL": held.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1",
			"FROGNANO_MAX_SANDBOXES": "1"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	wait := strings.Index(log, waitLine)
	free := strings.Index(log, "a sandbox is free for the tests before\n")
	if wait < 0 || free < wait || !strings.Contains(log, "finished: exit reason agent after 5 steps") {
		t.Errorf("stderr does not say the tests before waited for a sandbox, then got one:\n%s", log)
	}
}
