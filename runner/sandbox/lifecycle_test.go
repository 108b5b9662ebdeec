package sandbox_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/runner/sandbox"
)

// requireGone fails unless the container and its volumes no longer exist.
func requireGone(t *testing.T, id string, volumes []string) {
	t.Helper()
	ctx := context.Background()
	if _, err := docker.ContainerInspect(ctx, id); !cerrdefs.IsNotFound(err) {
		t.Errorf("container %s still exists (inspect err %v)", id, err)
	}
	for _, v := range volumes {
		if _, err := docker.VolumeInspect(ctx, v); !cerrdefs.IsNotFound(err) {
			t.Errorf("volume %s still exists (inspect err %v)", v, err)
		}
	}
}

// volumesOf lists the container's volume names (the anonymous workspace and executor volumes).
func volumesOf(t *testing.T, id string) []string {
	t.Helper()
	info, err := docker.ContainerInspect(context.Background(), id)
	if err != nil {
		t.Fatalf("inspecting %s: %v", id, err)
	}
	var names []string
	for _, m := range info.Mounts {
		if m.Type == "volume" {
			names = append(names, m.Name)
		}
	}
	if len(names) != 2 {
		t.Fatalf("want 2 volumes (workspace, executor), got %v", info.Mounts)
	}
	return names
}

func TestCloseRemovesEverything(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	vols := volumesOf(t, sb.ID())
	info, err := docker.ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Labels[sandbox.LabelSandbox] != "1" || info.Config.Labels[sandbox.LabelPurpose] != "agent" ||
		info.Config.Labels[sandbox.LabelRunID] != "TestCloseRemovesEverything" || info.Config.Labels[sandbox.LabelOwner] != "sandbox-test" {
		t.Errorf("labels = %v", info.Config.Labels)
	}
	watcher := watcherOf(t, sb.ID())
	if watcher == "" {
		t.Fatal("the sandbox has no disk watcher")
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	requireGone(t, sb.ID(), vols)
	requireGone(t, watcher, nil)
	if err := sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := sb.Call(context.Background(), "Bash", `{"command":"true"}`); err == nil {
		t.Error("Call after Close succeeded")
	}
}

func TestCancelDuringLongBash(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	vols := volumesOf(t, sb.ID())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sb.Call(ctx, "Bash", `{"command":"touch /tmp/started; sleep 600"}`)
		errc <- err
	}()
	waitFor(t, sb, "test -e /tmp/started") // cancel once the command runs
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Call after cancel: err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Call did not return after its context was cancelled")
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	requireGone(t, sb.ID(), vols)
}

func TestPruneRemovesLeftovers(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Owner = "prune-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var ids, watchers []string
	var vols [][]string
	for range 2 {
		// Left behind on purpose, as by a crashed process: no Close until Prune ran.
		sb, err := sandbox.New(context.Background(), docker, cfg, "leftover", "tests-before")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
		ids = append(ids, sb.ID())
		watchers = append(watchers, watcherOf(t, sb.ID()))
		vols = append(vols, volumesOf(t, sb.ID()))
	}
	other := newSandbox(t, testConfig(), "agent") // another owner's: must survive
	n, err := sandbox.Prune(context.Background(), docker, cfg.Owner)
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2, nil", n, err)
	}
	// Each with its disk watcher and its volumes (the watcher mounts the workspace volume too).
	for i, id := range ids {
		requireGone(t, id, vols[i])
		requireGone(t, watchers[i], nil)
	}
	if _, err := docker.ContainerInspect(context.Background(), other.ID()); err != nil {
		t.Errorf("Prune removed another owner's sandbox: %v", err)
	}
	if watcherOf(t, other.ID()) == "" {
		t.Error("Prune removed another owner's disk watcher")
	}
}

func TestNewMissingImage(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Image = "frognano-no-such-image:never"
	_, err := sandbox.New(context.Background(), docker, cfg, "missing", "agent")
	if err == nil || !strings.Contains(err.Error(), "build-offline.sh") {
		t.Errorf("New with a missing image: err = %v, want a hint to build it", err)
	}
}

func TestConfigRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*sandbox.Config)
	}{
		{"Root", func(c *sandbox.Config) { c.User = "0:0" }},
		{"UserName", func(c *sandbox.Config) { c.User = "frognano" }},
		{"RelativeWorkdir", func(c *sandbox.Config) { c.Workdir = "workspace" }},
		{"WorkdirIsRoot", func(c *sandbox.Config) { c.Workdir = "/" }},
		{"TinyMemory", func(c *sandbox.Config) { c.Memory = 1 << 20 }},
		{"TinyDisk", func(c *sandbox.Config) { c.Disk = 1 << 10 }},
		{"NegativeDisk", func(c *sandbox.Config) { c.Disk = -1 }},
		{"TinyLifetime", func(c *sandbox.Config) { c.Lifetime = time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			tt.mod(&cfg)
			if sb, err := sandbox.New(context.Background(), docker, cfg, "refused", "agent"); err == nil {
				sb.Close()
				t.Error("New accepted the config")
			}
		})
	}
}

func TestForkBombStopsAtPidsLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.PidsLimit = 64
	sb := readySandbox(t, cfg, "")
	// The bomb runs in its own process group for 3 s, then the group is killed. The timer is
	// bash's read on a FIFO and kill is a builtin, so neither needs to fork while the pids are
	// exhausted (coreutils timeout would not do: it exits without killing the group as soon as
	// its child dies, leaving the bomb running). Output goes to a file: a pipe to a reader that
	// stops early would end the bomb by SIGPIPE instead of by the limit.
	r := bash(t, sb, `mkfifo /tmp/timer
setsid bash -c 'bomb() { bomb | bomb & }; bomb; wait' >/tmp/bomb.log 2>&1 &
pgid=$!
read -t 3 <>/tmp/timer
for i in 1 2 3 4 5; do kill -KILL -- -$pgid 2>/dev/null; read -t 0.2 <>/tmp/timer; done
grep -c -m1 'Resource temporarily unavailable' /tmp/bomb.log`)
	if strings.TrimSpace(r.stdout) != "1" {
		t.Errorf("the fork bomb did not hit the pids limit: %s", r.raw)
	}
	// The sandbox recovers once the bomb is gone: only init, sleep and the executor remain.
	deadline := time.Now().Add(time.Minute)
	for {
		procs, err := sandboxProcesses(sb)
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes remain after the fork bomb: %q", len(procs), procs[:min(len(procs), 8)])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := bash(t, sb, "echo alive"); r.stdout != "alive\n" {
		t.Errorf("the sandbox did not recover: %s", r.raw)
	}
	info, err := docker.ContainerInspect(context.Background(), sb.ID())
	if err != nil || info.HostConfig.PidsLimit == nil || *info.HostConfig.PidsLimit != 64 {
		t.Errorf("pids limit not set on the container: %v", err)
	}
}

func TestMemoryHogIsOOMKilled(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Memory = 96 << 20
	sb := readySandbox(t, cfg, "")
	ctx := context.Background()
	if n, err := sb.OOMKills(ctx); err != nil || n != 0 {
		t.Fatalf("OOMKills = %d, %v before any hog ran", n, err)
	}
	r := bash(t, sb, `python3 -c 'b = bytearray(1 << 30); print("survived")'`)
	// The executor reports death by a signal as minus the signal, like Python's returncode.
	if r.code != -9 || strings.Contains(r.stdout, "survived") {
		t.Errorf("the hog was not killed (want exit -9, SIGKILL): %s", r.raw)
	}
	if n, err := sb.OOMKills(ctx); err != nil || n < 1 {
		t.Errorf("OOMKills = %d, %v after the hog was killed", n, err)
	}
	if r := bash(t, sb, "echo alive"); r.stdout != "alive\n" {
		t.Errorf("the executor did not survive the hog: %s", r.raw)
	}
}

func TestExecutorDeathIsAnError(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	// The Bash tool's shell is a child of the executor: kill its parent, as a hostile command could.
	_, err := sb.Call(context.Background(), "Bash", `{"command":"kill -KILL $PPID; sleep 5"}`)
	if err == nil || !strings.Contains(err.Error(), "sandbox executor exited with code 137") {
		t.Fatalf("Call that killed the executor: err = %v, want it to say the executor exited", err)
	}
	if _, err := sb.Call(context.Background(), "Read", `{"file_path":"README.md"}`); err == nil {
		t.Error("Call after the executor died succeeded")
	}
}

func TestCallAfterCancelledCall(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sb.Call(ctx, "Bash", `{"command":"mkfifo /tmp/f; touch /tmp/started; read -t 2 <>/tmp/f; echo abandoned"}`)
		errc <- err
	}()
	waitFor(t, sb, "test -e /tmp/started")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call: err = %v", err)
	}
	// The abandoned call's answer arrives first and must not be taken for this one's.
	if r := bash(t, sb, "echo second"); r.stdout != "second\n" {
		t.Errorf("the call after a cancelled one got %q", r.raw)
	}
}

// TestNewCancelledLeavesNothing cancels New at many points of its life; whatever it returns, no
// container of that run may remain once it returned (an abandoned create request used to leave
// a "Created" container nobody knew the ID of).
func TestNewCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	runID := "cancel-new-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	byRun := filters.NewArgs(filters.Arg("label", sandbox.LabelRunID+"="+runID))
	t.Cleanup(func() { // what a failure left behind
		list, _ := docker.ContainerList(context.Background(), container.ListOptions{All: true, Filters: byRun})
		for _, c := range list {
			_ = docker.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}
	})
	for _, d := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		40 * time.Millisecond, 80 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		sb, err := sandbox.New(ctx, docker, testConfig(), runID, "tests-before")
		cancel()
		if err == nil {
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("New cancelled after %s: err = %v, want the context's error", d, err)
		}
		list, err := docker.ContainerList(context.Background(), container.ListOptions{All: true, Filters: byRun})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 0 {
			t.Fatalf("New cancelled after %s left %d container(s) behind", d, len(list))
		}
	}
}

func TestPruneOthersKeepsThisInstance(t *testing.T) {
	t.Parallel()
	owner := "prune-others-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	mk := func(instance string) *sandbox.Sandbox {
		cfg := testConfig()
		cfg.Owner, cfg.Instance = owner, instance
		return newSandbox(t, cfg, "agent")
	}
	ours, dead := mk("this-start"), mk("crashed-start")
	unlabelled := mk("") // made before instances were labelled: not ours either
	if _, err := sandbox.PruneOthers(context.Background(), docker, owner, ""); err == nil {
		t.Error("PruneOthers with no instance should refuse")
	}
	n, err := sandbox.PruneOthers(context.Background(), docker, owner, "this-start")
	if err != nil || n != 2 {
		t.Fatalf("PruneOthers = %d, %v; want 2, nil", n, err)
	}
	requireGone(t, dead.ID(), nil)
	requireGone(t, unlabelled.ID(), nil)
	if _, err := docker.ContainerInspect(context.Background(), ours.ID()); err != nil {
		t.Errorf("PruneOthers removed this instance's sandbox: %v", err)
	}
}
