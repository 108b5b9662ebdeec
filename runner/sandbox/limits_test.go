package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/runner/sandbox"
)

// The tests of the limits a model could try to get around: the workspace's disk, the memory
// (OOM kills it must not hide), the sandbox's lifetime. Each attack runs for real.

const testDisk = 64 << 20

// writeFor is a Bash command that writes up to 768 MiB into path in 1 MiB steps, then says
// "finished": stopped by the disk limit it never finishes, and a broken limit cannot make this
// test write more than 768 MiB.
func writeFor(path string) string {
	return `python3 -c '
import os, sys, time
buf = b"\0" * (1 << 20)
with open(sys.argv[1], "wb") as f:
    for _ in range(768):
        f.write(buf)
        f.flush()
        os.fsync(f.fileno())  # at the disk's pace, not the page cache's
print("finished", flush=True)
time.sleep(300)  # a watcher slowed by a loaded machine still finds the whole file' ` + path
}

// workspaceVolume names the sandbox's workspace volume.
func workspaceVolume(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	info, err := docker.ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range info.Mounts {
		if m.Type == mount.TypeVolume && m.Destination == sandbox.DefaultWorkdir {
			return m.Name
		}
	}
	t.Fatalf("no workspace volume in %v", info.Mounts)
	return ""
}

// volumeUsage measures a volume from outside the sandbox, as root with the capability to
// read every directory, in a throwaway container.
func volumeUsage(t *testing.T, volume string) int64 {
	t.Helper()
	ctx := context.Background()
	created, err := docker.ContainerCreate(ctx, &container.Config{
		Image: sandbox.DefaultImage, User: "0:0", Cmd: []string{"du", "-sxB1", "/v"}, NetworkDisabled: true,
	}, &container.HostConfig{
		NetworkMode: "none", CapDrop: []string{"ALL"}, CapAdd: []string{"DAC_READ_SEARCH"},
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: "/v", ReadOnly: true}},
	}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer docker.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true})
	waitc, errc := docker.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waitc:
	case err := <-errc:
		t.Fatal(err)
	}
	logs, err := docker.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, io.Discard, logs); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.Fields(out.String() + " x")[0], 10, 64)
	if err != nil {
		t.Fatalf("du of volume %s: %q", volume, out.String())
	}
	return n
}

// watcherOf returns the sandbox's disk watcher container, or "" when there is none.
func watcherOf(t *testing.T, sandboxID string) string {
	t.Helper()
	list, err := docker.ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelWatches+"="+sandboxID)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) > 1 {
		t.Fatalf("%d watchers for one sandbox", len(list))
	}
	if len(list) == 0 {
		return ""
	}
	return list[0].ID
}

// requireStoppedForDisk checks that the sandbox was stopped for its disk and says so, and
// reports how far past the limit the workspace went.
func requireStoppedForDisk(t *testing.T, sb *sandbox.Sandbox, start time.Time) {
	t.Helper()
	ctx := context.Background()
	why := sb.StopReason(ctx)
	if !strings.Contains(why, "past the sandbox's disk limit of 64.0 MiB") || !strings.Contains(why, "every process in the sandbox was killed") {
		t.Errorf("StopReason = %q, want the disk limit", why)
	}
	info, err := docker.ContainerInspect(ctx, sb.ID())
	if err != nil || info.State.Running {
		t.Errorf("the sandbox still runs after its disk limit (err %v)", err)
	}
	used := volumeUsage(t, workspaceVolume(t, sb))
	t.Logf("stopped %.1fs after the write began at %.1f MiB (limit 64 MiB); %s", time.Since(start).Seconds(), float64(used)/(1<<20), why)
	// How far past the limit the writer got depends on the machine's load (it is logged, and
	// the precision is documented in disk.go); what is asserted is that it was stopped.
}

func TestDiskLimitStopsWriter(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Disk = testDisk
	sb := readySandbox(t, cfg, "")
	if why := sb.StopReason(context.Background()); why != "" {
		t.Fatalf("StopReason before anything was written: %q", why)
	}
	start := time.Now()
	args, _ := json.Marshal(map[string]any{"command": writeFor("/workspace/fill"), "timeout": 300})
	obs, err := sb.Call(context.Background(), "Bash", string(args))
	if err == nil && strings.Contains(obs, "finished") {
		t.Fatalf("the writer finished 768 MiB under a 64 MiB limit: %s", obs)
	}
	requireStoppedForDisk(t, sb, start)
	// The run goes on to report: nothing more runs in this sandbox.
	if _, err := sb.Call(context.Background(), "Bash", `{"command":"true"}`); err == nil {
		t.Error("a call succeeded in the sandbox stopped for its disk")
	}
}

// TestDiskLimitCannotBeHidden: the writer hides its file in a directory nobody but its owner
// may list (mode 0300: root without capabilities could not measure it) while holding every
// pid the sandbox may have (so not even a root exec could start in it).
func TestDiskLimitCannotBeHidden(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Disk = testDisk
	cfg.PidsLimit = 32
	sb := readySandbox(t, cfg, "")
	start := time.Now()
	script := `mkdir -m 0300 /workspace/hidden && python3 -c '
import os, sys, time
kids = 0
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    kids += 1
print("holding", kids, "pids", flush=True)
buf = b"\0" * (1 << 20)
with open("/workspace/hidden/fill", "wb") as f:
    for _ in range(768):
        f.write(buf)
        f.flush()
print("finished")'`
	args, _ := json.Marshal(map[string]any{"command": script, "timeout": 300})
	obs, err := sb.Call(context.Background(), "Bash", string(args))
	if err == nil && strings.Contains(obs, "finished") {
		t.Fatalf("the hidden writer finished 768 MiB under a 64 MiB limit: %s", obs)
	}
	requireStoppedForDisk(t, sb, start)
}

// TestDiskLimitInTestSandbox: the test runs (before/after) use the same package and so the
// same bound; a test command that fills the disk ends, and the reason is there to report.
func TestDiskLimitInTestSandbox(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Disk = testDisk
	sb := newSandbox(t, cfg, "tests-after")
	ctx := context.Background()
	if err := sb.CopyRepo(ctx, makeRepo(t)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-c", writeFor("/workspace/fill")}, nil, 5*time.Minute, 0)
	if err == nil && strings.Contains(string(res.Stdout), "finished") {
		t.Fatalf("the test command finished 768 MiB under a 64 MiB limit: %+v", res)
	}
	requireStoppedForDisk(t, sb, start)
}

func TestOOMKillsCounted(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Memory = 96 << 20
	sb := readySandbox(t, cfg, "")
	ctx := context.Background()
	if n, err := sb.OOMKills(ctx); n != 0 || err != nil {
		t.Fatalf("OOMKills before any hog = %d, %v", n, err)
	}
	if note := sb.OOMKillsNote(ctx); note != "" {
		t.Fatalf("OOMKillsNote before any hog = %q", note)
	}
	// Two hogs, each killed while the executor and the sandbox live on.
	for range 2 {
		r := bash(t, sb, `python3 -c 'b = bytearray(1 << 30); print("survived")'`)
		if r.code != -9 || strings.Contains(r.stdout, "survived") {
			t.Fatalf("the hog was not killed: %s", r.raw)
		}
	}
	// The model cannot make the count go away: it cannot write the cgroup, nor kill the reader.
	bash(t, sb, `echo 0 > /sys/fs/cgroup/memory/memory.oom_control; echo 0 > /sys/fs/cgroup/memory.events; true`)
	if n, err := sb.OOMKills(ctx); n != 2 || err != nil {
		t.Errorf("OOMKills = %d, %v; want 2", n, err)
	}
	if note := sb.OOMKillsNote(ctx); note != "2 processes were killed for running out of memory (the sandbox's limit is 96.0 MiB)." {
		t.Errorf("OOMKillsNote = %q", note)
	}
	// Once the container is gone from under the run, the engine's events still tell (a lower
	// bound: the engine may fold kills close together into one event, and it keeps only its
	// latest events).
	if err := docker.ContainerKill(ctx, sb.ID(), "KILL"); err != nil {
		t.Fatal(err)
	}
	n, err := sb.OOMKills(ctx)
	if err != nil || n > 2 {
		t.Errorf("OOMKills of a stopped sandbox = %d, %v; want at most 2 and no error", n, err)
	}
	t.Logf("OOMKills from the engine's events after the container stopped: %d (of 2)", n)
}

// TestLifetimeEndsSandbox: a sandbox whose creator never closes it (a killed `frognano run`)
// ends by itself at its lifetime.
func TestLifetimeEndsSandbox(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	// Long enough for the sandbox to get ready on a loaded machine, short enough to wait for.
	cfg.Lifetime = 10 * time.Second
	sb := readySandbox(t, cfg, "")
	ctx := context.Background()
	info, err := docker.ContainerInspect(ctx, sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(info.Config.Cmd, " "); got != "sleep 10" {
		t.Errorf("PID 1 runs %q, want sleep 10", got)
	}
	// A process the model leaves behind does not keep the sandbox alive.
	bash(t, sb, "nohup sleep 600 >/dev/null 2>&1 &")
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	waitc, errc := docker.ContainerWait(waitCtx, sb.ID(), container.WaitConditionNotRunning)
	select {
	case <-waitc:
	case err := <-errc:
		t.Fatalf("the sandbox did not end within a minute of its 10 s lifetime: %v", err)
	}
	t.Logf("ended %.1fs after the wait began", time.Since(start).Seconds())
	if why := sb.StopReason(ctx); why != "The sandbox reached its lifetime of 10s and ended by itself." {
		t.Errorf("StopReason = %q", why)
	}
}

// TestFileLimitStopsCreator: a command that makes empty files without end (inodes on the
// engine's filesystem, almost no bytes) is stopped at the file limit, with that reason.
func TestFileLimitStopsCreator(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Files = 5000
	sb := readySandbox(t, cfg, "")
	start := time.Now()
	args, _ := json.Marshal(map[string]any{
		"command": `mkdir -p /workspace/many && cd /workspace/many && i=0; while [ $i -lt 200000 ]; do : > f$i; i=$((i+1)); done; echo finished`,
		"timeout": 300,
	})
	obs, err := sb.Call(context.Background(), "Bash", string(args))
	if err == nil && strings.Contains(obs, "finished") {
		t.Fatalf("200,000 files were made under a limit of 5,000: %s", obs)
	}
	why := sb.StopReason(context.Background())
	if !strings.Contains(why, "past the sandbox's limit of 5000 files") || !strings.Contains(why, "every process in the sandbox was killed") {
		t.Fatalf("StopReason = %q, want the file limit", why)
	}
	t.Logf("stopped %.1fs after the creator began: %s", time.Since(start).Seconds(), why)
	if info, err := docker.ContainerInspect(context.Background(), sb.ID()); err != nil || info.State.Running {
		t.Errorf("the sandbox still runs after its file limit (err %v)", err)
	}
}

// TestWatcherSurvivesVanishingFiles: files created and deleted while the watcher measures (what
// every test run does) make du exit 1 with a total still printed; the sandbox must live on.
func TestWatcherSurvivesVanishingFiles(t *testing.T) {
	t.Parallel()
	sb := readySandbox(t, testConfig(), "")
	args, _ := json.Marshal(map[string]any{
		"command": `end=$((SECONDS + 6)); while [ $SECONDS -lt $end ]; do mkdir -p /workspace/t/a/b; for i in 1 2 3 4 5 6 7 8; do : > /workspace/t/a/b/f$i; done; rm -rf /workspace/t; done; echo survived`,
		"timeout": 60,
	})
	obs, err := sb.Call(context.Background(), "Bash", string(args))
	if err != nil || !strings.Contains(obs, "survived") {
		t.Fatalf("the churning command did not finish: %v %q (stop reason %q)", err, obs, sb.StopReason(context.Background()))
	}
	if why := sb.StopReason(context.Background()); why != "" {
		t.Fatalf("StopReason = %q", why)
	}
}
