package runner_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// fillDisk writes up to 768 MiB into path, 1 MiB at a time, prints "finished" and waits: a broken
// disk limit cannot make the test write more, and a watcher slowed by a loaded machine still
// finds the whole file before the command ends.
func fillDisk(path string) string {
	return `python3 -c 'import sys
buf = b"\0" * (1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(768):
        f.write(buf)
        f.flush()
print("finished", flush=True)
import time
time.sleep(300)  # on a loaded machine the watcher may only see the file once it is whole' ` + path
}

// TestRunReportsLimits: a model that runs a memory hog (killed, the sandbox lives on) and then
// fills the disk (the sandbox is stopped), with a test command that fills the disk too. The
// run ends, and the report says what happened in plain words.
func TestRunReportsLimits(t *testing.T) {
	t.Parallel()
	script, err := leaftest.Parse(fmt.Appendf(nil, `{
  "description": "A memory hog, then a command that fills the disk; the third turn is never asked for.",
  "allow_unused": true,
  "turns": [
    {"tool_calls": [{"name": "Bash", "arguments": {"command": "python3 -c 'b = bytearray(1 << 30)'"}}]},
    {"tool_calls": [{"name": "Bash", "arguments": {"command": %q, "timeout": 300}}]},
    {"content": "never sent"}
  ]
}`, fillDisk("/workspace/fill")))
	if err != nil {
		t.Fatal(err)
	}
	model := leaftest.NewServer(t, script)
	cfg := runner.DefaultConfig()
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 256 << 20
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Disk = 64 << 20
	cfg.Sandbox.Owner = "runner-test"
	cfg.Leaf.BaseURL = model.URL
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestCmd = fillDisk("/workspace/fill-by-tests")
	cfg.TestTimeout = 3 * time.Minute
	r := runner.New(docker, cfg, nil)
	runID := fmt.Sprintf("rt-limits-%d", time.Now().UnixNano())
	res, err := r.Run(context.Background(), runner.Spec{RunID: runID, RepoDir: checkout(t, "pyaverage"), Task: "Fix the failing test."}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Leaf.ExitReason != leaf.ExitToolError {
		t.Errorf("exit reason %q, want %q (the sandbox was stopped under the tool call)", res.Leaf.ExitReason, leaf.ExitToolError)
	}
	notes := strings.Join(res.Notes, "\n")
	// The kernel may kill more than the one hog (it picks by size, at the moment memory runs out).
	if !regexp.MustCompile(`\b[1-9][0-9]* process(es were| was) killed for running out of memory \(the sandbox's limit is 256\.0 MiB\)\.`).MatchString(notes) {
		t.Errorf("the notes lack the OOM kills:\n%s", notes)
	}
	for _, want := range []string{
		"past the sandbox's disk limit of 64.0 MiB: every process in the sandbox was killed.",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes lack %q:\n%s", want, notes)
		}
	}
	if res.TestsBefore == nil || !strings.Contains(res.TestsBefore.Error, "past the sandbox's disk limit of 64.0 MiB") {
		t.Errorf("the test run that filled the disk: %+v", res.TestsBefore)
	}
	if md := report.Markdown(res); !strings.Contains(md, "past the sandbox's disk limit") {
		t.Errorf("the report does not say the disk limit stopped the run:\n%s", md)
	}
	if ids := containersOf(t, runID); len(ids) != 0 {
		t.Errorf("%d container(s) of the run remain", len(ids))
	}
}
