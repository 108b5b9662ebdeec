package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

func TestExec(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, testConfig(), "tests-before")
	if err := sb.CopyRepo(context.Background(), makeRepo(t)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	t.Run("OutputAndExitCode", func(t *testing.T) {
		res, err := sb.Exec(ctx, []string{"/bin/sh", "-c", "pwd; id -u; echo oops >&2; exit 3"}, nil, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 3 || string(res.Stdout) != "/workspace\n1000\n" || string(res.Stderr) != "oops\n" || res.TimedOut || res.Truncated {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("Stdin", func(t *testing.T) {
		in := strings.Repeat("line of input\n", 10000)
		res, err := sb.Exec(ctx, []string{"sha256sum"}, strings.NewReader(in), time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(in))
		if want := hex.EncodeToString(sum[:]) + "  -\n"; res.ExitCode != 0 || string(res.Stdout) != want {
			t.Errorf("stdin not delivered whole: got %q, want %q", res.Stdout, want)
		}
	})
	t.Run("GitApplyFromStdin", func(t *testing.T) {
		// How the runner applies a patch in a test sandbox.
		patch := "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
		res, err := sb.Exec(ctx, []string{"git", "apply", "-"}, strings.NewReader(patch), time.Minute, 0)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("git apply: %v %+v", err, res)
		}
		res, err = sb.Exec(ctx, []string{"python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"}, nil, 2*time.Minute, 0)
		if err != nil || res.ExitCode != 0 || !bytes.Contains(res.Stdout, []byte("1 passed")) {
			t.Errorf("pytest after the patch: %v exit %d\n%s%s", err, res.ExitCode, res.Stdout, res.Stderr)
		}
	})
	t.Run("Truncated", func(t *testing.T) {
		res, err := sb.Exec(ctx, []string{"/bin/sh", "-c", "head -c 100000 /dev/zero; head -c 10 /dev/zero >&2"}, nil, time.Minute, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Stdout) != 1000 || len(res.Stderr) != 10 || res.ExitCode != 0 {
			t.Errorf("truncated=%v stdout=%d stderr=%d exit=%d", res.Truncated, len(res.Stdout), len(res.Stderr), res.ExitCode)
		}
	})
	t.Run("TimeoutKillsProcessTree", func(t *testing.T) {
		res, err := sb.Exec(ctx, []string{"/bin/bash", "-c", "(sleep 301.5 &); echo started; sleep 301.5"}, nil, time.Second, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || string(res.Stdout) != "started\n" {
			t.Errorf("got %+v", res)
		}
		requireNoProcess(t, sb, "sleep 301.5")
	})
	t.Run("CancelKillsCommand", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := sb.Exec(cctx, []string{"/bin/sh", "-c", "touch /tmp/exec-started; (sleep 302.5 &); exec sleep 302.5"}, nil, 10*time.Minute, 0)
			done <- err
		}()
		waitFor(t, sb, "test -e /tmp/exec-started")
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		requireNoProcess(t, sb, "sleep 302.5")
	})
}

// waitFor polls the sandbox (external state) until the shell condition holds, with a deadline.
func waitFor(t *testing.T, sb *sandbox.Sandbox, cond string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := sb.Exec(context.Background(), []string{"/bin/sh", "-c", cond}, nil, 10*time.Second, 0)
		if err != nil {
			t.Fatalf("probing %q: %v", cond, err)
		}
		if res.ExitCode == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never held: %s%s", cond, res.Stdout, res.Stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireNoProcess waits until no process of the sandbox has a command line containing args.
// It asks the engine (ContainerTop runs ps on the host), so the answer does not depend on the
// sandbox being able to fork.
func requireNoProcess(t *testing.T, sb *sandbox.Sandbox, args string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		procs, err := sandboxProcesses(sb)
		if err != nil {
			t.Fatalf("listing the sandbox's processes: %v", err)
		}
		left := slices.DeleteFunc(procs, func(cmd string) bool { return !strings.Contains(cmd, args) })
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %q are left", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sandboxProcesses lists the command lines of the container's processes.
func sandboxProcesses(sb *sandbox.Sandbox) ([]string, error) {
	top, err := docker.ContainerTop(context.Background(), sb.ID(), nil)
	if err != nil {
		return nil, err
	}
	col := slices.Index(top.Titles, "CMD")
	if col < 0 {
		return nil, fmt.Errorf("no CMD column in %q", top.Titles)
	}
	var cmds []string
	for _, p := range top.Processes {
		cmds = append(cmds, p[col])
	}
	return cmds, nil
}
