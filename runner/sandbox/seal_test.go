package sandbox_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/executor"
	"github.com/frognano/frognano/runner/sandbox"
)

// newSetup makes a setup container without network that is closed when the test ends.
func newSetup(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	cfg := testConfig()
	cfg.Lifetime = 10 * time.Minute
	sb, err := sandbox.NewSetup(context.Background(), docker, cfg, "none", 1<<30, strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		t.Fatalf("NewSetup: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// mountPoints are where a container has something mounted besides its root filesystem: its
// volumes, tmpfs mounts and the init binary.
func mountPoints(t *testing.T, id string) []string {
	t.Helper()
	info, err := docker.ContainerInspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range info.Mounts {
		out = append(out, m.Destination)
	}
	for p := range info.HostConfig.Tmpfs {
		out = append(out, p)
	}
	if info.HostConfig.Init != nil && *info.HostConfig.Init {
		out = append(out, "init")
	}
	sort.Strings(out)
	return out
}

// TestSetupHasTheSandboxesMounts: the seal check skips what the layer holds at a mount point of
// the setup container (the engine's placeholder for the init binary, the workspace's directory)
// because every sandbox made from the image mounts the same there. That holds only while the
// setup container has exactly the sandboxes' mounts.
func TestSetupHasTheSandboxesMounts(t *testing.T) {
	t.Parallel()
	setup := newSetup(t)
	sb := newSandbox(t, testConfig(), "agent")
	if a, b := mountPoints(t, setup.ID()), mountPoints(t, sb.ID()); !slices.Equal(a, b) {
		t.Errorf("the setup container mounts %q, a sandbox %q: the seal check's skip of mount points would hide what a sandbox shows", a, b)
	}
}

// TestSealRunsNothingOfTheImage: setup replaces the programs the container would run when it
// starts again (sleep, timeout, sh) with ones that write a mark as root, and leaves a process
// running. Seal ends that process and starts the container with frognano's own executor as its
// only program: no mark is written, nothing of setup runs afterwards, and the value setup left
// in a file is found there.
func TestSealRunsNothingOfTheImage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const value = "seal-test-value-0042"
	setup := newSetup(t)
	script := `set -eu
for p in /usr/bin/sleep /usr/bin/timeout /bin/sh /usr/bin/dash; do
  [ -e "$p" ] || continue
  printf '#!/bin/bash\necho ran > /etc/pwned-$(basename "$0")\n' > "$p.new" && chmod 755 "$p.new" && mv -f "$p.new" "$p"
done
printf 'v=%s\n' "` + value + `" > /etc/mirror.conf
setsid /bin/bash -c 'while :; do date > /etc/clock; read -t 0.05 < /dev/zero || true; done' > /dev/null 2>&1 < /dev/null &
`
	res, err := setup.Run(ctx, sandbox.ExecSpec{Argv: []string{"/bin/bash", "-c", script}, User: sandbox.SetupUser, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("setup: %v exit %d\n%s%s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	rep, err := setup.Seal(ctx, []string{value}, time.Minute)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if !rep.End.Done {
		t.Fatalf("the check did not finish: %+v", rep.End)
	}
	var found []string
	for _, l := range rep.Lines {
		found = append(found, rep.Paths[l.Path]+": "+l.Where+" "+l.Form+l.Problem)
	}
	if !slices.Equal(found, []string{"/etc/mirror.conf: " + executor.SealInContent + " as is"}) {
		t.Errorf("found %q, want the value in /etc/mirror.conf alone", found)
	}
	// Nothing setup replaced ran, and nothing setup started runs: the container's processes
	// are the engine's init and frognano's idle executor.
	changes, err := docker.ContainerDiff(ctx, setup.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if strings.HasPrefix(c.Path, "/etc/pwned") {
			t.Errorf("a program setup replaced ran when the container started again: %s", c.Path)
		}
	}
	top, err := docker.ContainerTop(ctx, setup.ID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := slices.Index(top.Titles, "CMD")
	if cmd < 0 {
		t.Fatalf("no CMD column in %q", top.Titles)
	}
	for _, p := range top.Processes {
		if c := p[cmd]; !strings.HasPrefix(c, "/sbin/docker-init") && !strings.HasPrefix(c, "/opt/frognano/frognano-executor -idle") {
			t.Errorf("after Seal the setup container runs %q", c)
		}
	}
	if len(top.Processes) != 2 {
		t.Errorf("after Seal the setup container runs %d processes, want the init and the executor: %q", len(top.Processes), top.Processes)
	}
}
