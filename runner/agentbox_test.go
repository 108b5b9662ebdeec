package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestFirstModelTurnOverlapsTheAgentSandbox: the model's first request goes out while the
// agent's sandbox is still being made (its prompt needs no tool). The test holds the only
// sandbox slot, so the agent's sandbox cannot exist yet; the request must arrive anyway, and
// once the slot is free the run finishes as usual.
func TestFirstModelTurnOverlapsTheAgentSandbox(t *testing.T) {
	t.Parallel()
	b := setupOwnedWith(t, 1, env.Config{}, checkout(t, "pyaverage"), func(c *runner.Config) { c.TestCmd = "none" },
		leaftest.LoadModel(t, "e2e-pyaverage.json"))
	holderCfg := sandbox.DefaultConfig()
	holderCfg.Image = sandbox.DefaultImage
	holderCfg.Owner = b.owner
	holderCfg.Slots = b.slots
	holder, err := sandbox.New(context.Background(), docker, holderCfg, b.owner, "holder")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()

	done := make(chan error, 1)
	var res *runner.Result
	go func() {
		var err error
		res, err = b.runner.RunAttempts(context.Background(), b.spec, b.opt)
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.servers[0].WaitRequests(ctx, 1); err != nil {
		t.Fatalf("the first model request waited for the agent's sandbox: %v", err)
	}
	for _, c := range b.containers(t) {
		if c.Labels[sandbox.LabelPurpose] == "agent" {
			t.Fatalf("an agent sandbox exists while the test holds the only slot: %s", c.Names)
		}
	}
	holder.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Leaf.ExitReason != leaf.ExitAgent || len(res.PatchBytes()) == 0 {
		t.Errorf("exit %q, patch %d bytes, want a finished run with a patch", res.Leaf.ExitReason, len(res.PatchBytes()))
	}
}

// TestAgentSandboxFailureEndsTheRunAndItsModelRequest: when the agent's sandbox cannot be made
// ready (here its executor binary is missing), the model request already under way is
// cancelled, the run ends with the infrastructure error it always had, and nothing is left.
func TestAgentSandboxFailureEndsTheRunAndItsModelRequest(t *testing.T) {
	t.Parallel()
	script := leaftest.LoadModel(t, "e2e-pyaverage.json")
	script.Turns[0].Delay = "10m" // the first answer never comes on its own
	script.AllowUnused = true
	b := setupOwnedWith(t, 0, env.Config{}, checkout(t, "pyaverage"), func(c *runner.Config) {
		c.TestCmd = "none"
		c.Sandbox.ExecutorPath = t.TempDir() + "/no-such-executor"
	}, script)
	model := b.servers[0]
	_, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	var infra *runner.InfraError
	if !errors.As(err, &infra) || !strings.Contains(err.Error(), "starting the tool executor") {
		t.Fatalf("err = %v, want the executor's infrastructure error", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want the one that was under way", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for model.Cancelled() < 1 {
		if ctx.Err() != nil {
			t.Fatal("the model request under way was not cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range b.containers(t) {
		t.Errorf("left behind: %s (%s)", c.Names, c.State)
	}
}
