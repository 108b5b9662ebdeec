package dockerproxy_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"

	"github.com/frognano/frognano/runner/sandbox"
)

// watcherScript is runner/sandbox's watcherScript: the proxy grants DAC_READ_SEARCH only
// to that exact command, and the Baseline subtest below proves this copy still is it.
const watcherScript = `while read -r _; do du -sxB1 /workspace 2>/dev/null; echo "i$(du -sx --inodes /workspace 2>/dev/null)"; echo .; done`

// TestWatcherRunsOnlyItsOwnCommand is an attack by a compromised service: DAC_READ_SEARCH
// (open_by_handle_at, the classic escape) is granted to the disk watcher's command alone, but
// which program that command runs is decided by more than the entrypoint: PATH in the
// environment, what is mounted over the image's directories, a health check, an extra volume
// the service can copy a program into. Each variant puts a program the service wrote (here a
// script that prints its capabilities) where the watcher's `timeout` would run it as root with
// DAC_READ_SEARCH; the proxy must refuse each create, and nothing may be created.
func TestWatcherRunsOnlyItsOwnCommand(t *testing.T) {
	t.Parallel()
	b := setup(t, "review-"+randHex(t, 4))
	ctx := context.Background()

	// The watched sandbox, with the service's program in its workspace.
	ccfg, hcfg := sandboxConfig(b.labels(t))
	ccfg.Volumes = map[string]struct{}{"/workspace": {}}
	sb, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, sb.ID)
	if err := b.proxy.ContainerStart(ctx, sb.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	evil := "#!/bin/sh\necho PWNED; grep CapEff /proc/self/status\n"
	if err := b.proxy.CopyToContainer(ctx, sb.ID, "/workspace", tarOfMode(t, "timeout", evil, 0o755), container.CopyToContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := b.engine.ContainerInspect(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	volume := ""
	for _, m := range info.Mounts {
		if m.Destination == "/workspace" {
			volume = m.Name
		}
	}
	if volume == "" {
		t.Fatal("the sandbox has no workspace volume")
	}

	// watcher is runner/sandbox's disk watcher of sb, changed by mod.
	watcher := func(mod func(c *container.Config, h *container.HostConfig)) (*container.Config, *container.HostConfig) {
		labels := b.labels(t)
		labels[sandbox.LabelWatches] = sb.ID
		labels["dev.frognano.review-attack"] = "1"
		pids := int64(16)
		c := &container.Config{
			Image: sandbox.DefaultImage, User: "0:0", WorkingDir: "/",
			Entrypoint: []string{"timeout", "-s", "KILL", "60", "/bin/sh", "-c", watcherScript},
			Env:        []string{"LC_ALL=C"}, Labels: labels, NetworkDisabled: true,
			OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, StopSignal: "SIGKILL",
		}
		h := &container.HostConfig{
			NetworkMode: network.NetworkNone, CapDrop: []string{"ALL"}, CapAdd: []string{"DAC_READ_SEARCH"},
			SecurityOpt: []string{"no-new-privileges:true"}, ReadonlyRootfs: true, IpcMode: container.IPCModePrivate,
			LogConfig: container.LogConfig{Type: "none"},
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: "/workspace", ReadOnly: true,
				VolumeOptions: &mount.VolumeOptions{NoCopy: true}}},
			Resources: container.Resources{Memory: 64 << 20, MemorySwap: 64 << 20, PidsLimit: &pids},
		}
		if mod != nil {
			mod(c, h)
		}
		return c, h
	}

	t.Run("Baseline", func(t *testing.T) {
		c, h := watcher(nil)
		w, err := b.proxy.ContainerCreate(ctx, c, h, nil, nil, "")
		if err != nil {
			t.Fatalf("runner/sandbox's own watcher is refused, so this test's copy of it is stale: %v", err)
		}
		b.remove(t, w.ID)
	})

	cases := []struct {
		name string
		mod  func(c *container.Config, h *container.HostConfig)
	}{
		{"PathIntoTheWorkspace", func(c *container.Config, _ *container.HostConfig) {
			c.Env = []string{"PATH=/workspace:/usr/bin:/bin"}
		}},
		{"PreloadFromTheWorkspace", func(c *container.Config, _ *container.HostConfig) {
			c.Env = []string{"LD_PRELOAD=/workspace/evil.so"}
		}},
		{"WorkspaceMountedOverABinDirectory", func(_ *container.Config, h *container.HostConfig) {
			h.Mounts[0].Target = "/usr/local/bin"
		}},
		{"HealthCheckRunsTheWorkspace", func(c *container.Config, _ *container.HostConfig) {
			c.Healthcheck = &container.HealthConfig{Test: []string{"CMD", "/workspace/timeout"}}
		}},
		{"WritableVolumeOnThePath", func(c *container.Config, _ *container.HostConfig) {
			c.Volumes = map[string]struct{}{"/usr/local/sbin": {}}
		}},
		{"WritableTmpfsOnThePath", func(_ *container.Config, h *container.HostConfig) {
			h.Tmpfs = map[string]string{"/usr/local/sbin": "exec"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, h := watcher(tc.mod)
			w, err := b.proxy.ContainerCreate(ctx, c, h, nil, nil, "")
			if err == nil {
				b.remove(t, w.ID)
				t.Fatalf("the proxy created a DAC_READ_SEARCH watcher whose program the client chose%s", runEvil(t, b, w.ID))
			}
			if !strings.Contains(err.Error(), "frognano docker-proxy refused") {
				t.Errorf("not the proxy's refusal: %v", err)
			}
		})
	}
}

// runEvil starts a watcher the proxy should not have created, straight on the engine, and
// returns what it printed: the proof for the failure message.
func runEvil(t *testing.T, b *bundle, id string) string {
	ctx := context.Background()
	att, err := b.engine.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return ""
	}
	defer att.Close()
	if err := b.engine.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return ""
	}
	io.WriteString(att.Conn, "x\n")
	att.CloseWrite()
	out, _ := io.ReadAll(io.LimitReader(att.Reader, 4096))
	if s := string(bytes.ToValidUTF8(out, nil)); strings.Contains(s, "PWNED") {
		return "; started, it ran the client's program with these capabilities: " + s[strings.Index(s, "PWNED"):]
	}
	return ""
}

// tarOfMode is a tar stream of one file with the given mode.
func tarOfMode(t *testing.T, name, content string, mode int64) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, content)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}
