package verify

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

// The Python tests run the test tools where frognano runs them: in a fresh sandbox of the
// default image (frognano-sandbox:latest, which has python3 and pytest), not on the host,
// whose Python need not have pytest. Without a Docker engine or the image they fail.

var sandboxDocker = sync.OnceValues(sandbox.NewClient)

// sandboxRun is one run of a Plan in a sandbox: what Read gets.
type sandboxRun struct {
	Output   []byte // standard output, then standard error, as runner.runTests joins them
	ExitCode int
	Report   []byte // plan.ReportFile's content, nil when there is none
}

// runInSandbox copies dir into a fresh sandbox and runs plan there as runner.runTests does
// (bash -lc, then cat of the report file).
func runInSandbox(t *testing.T, dir string, plan Plan) sandboxRun {
	t.Helper()
	docker, err := sandboxDocker()
	if err != nil {
		t.Fatalf("these tests run Python in the sandbox and need a Docker engine: %v", err)
	}
	ctx := context.Background()
	if _, err := docker.ImageInspect(ctx, sandbox.DefaultImage); err != nil {
		t.Fatalf("image %s is missing (%v); build it with deploy/sandbox/build-offline.sh", sandbox.DefaultImage, err)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Owner = "verify-test"
	cfg.Memory = 512 << 20
	cfg.CPUs = 1
	sb, err := sandbox.New(ctx, docker, cfg, strings.ReplaceAll(t.Name(), "/", "-"), "tests")
	if err != nil {
		t.Fatalf("creating the sandbox: %v", err)
	}
	defer func() {
		if err := sb.Close(); err != nil {
			t.Errorf("removing the sandbox: %v", err)
		}
	}()
	if err := sb.CopyRepo(ctx, dir); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", plan.Shell}, nil, 2*time.Minute, 4<<20)
	if err != nil {
		t.Fatalf("running %q in the sandbox: %v", plan.Shell, err)
	}
	if res.TimedOut || res.Truncated {
		t.Fatalf("running %q: timed out %v, output cut %v", plan.Shell, res.TimedOut, res.Truncated)
	}
	run := sandboxRun{Output: append(append([]byte{}, res.Stdout...), res.Stderr...), ExitCode: res.ExitCode}
	if plan.ReportFile != "" {
		rep, err := sb.Exec(ctx, []string{"cat", plan.ReportFile}, nil, time.Minute, 32<<20)
		if err != nil {
			t.Fatalf("reading %s: %v", plan.ReportFile, err)
		}
		if rep.ExitCode == 0 {
			run.Report = rep.Stdout
		}
	}
	return run
}
