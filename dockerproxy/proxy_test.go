package dockerproxy_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/dockerproxy"
	"github.com/frognano/frognano/runner/sandbox"
)

// testLabel marks what these tests create directly on the engine, for their cleanup.
const testLabel = "dev.frognano.test"

// bundle is one proxy on a unix socket in front of the real engine, and clients of both.
type bundle struct {
	engine *client.Client // straight to the engine: the test's own view
	proxy  *client.Client // through the proxy: frognano's view
	http   *http.Client   // raw requests to the proxy
	owner  string
	logs   *syncBuffer
}

type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

func randHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func engineAddr() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return "unix:///var/run/docker.sock"
}

// setup starts a proxy for owner (empty: any owner) in front of the real engine.
func setup(t testing.TB, owner string) *bundle {
	t.Helper()
	engine, err := sandbox.NewClient()
	if err != nil {
		t.Fatalf("the proxy tests need a Docker engine: %v", err)
	}
	t.Cleanup(func() { engine.Close() })
	if _, err := engine.ImageInspect(context.Background(), sandbox.DefaultImage); err != nil {
		t.Fatalf("image %s is missing (%v); build it with: make sandbox-image", sandbox.DefaultImage, err)
	}
	logs := &syncBuffer{mu: make(chan struct{}, 1)}
	p, err := dockerproxy.New(dockerproxy.Config{Engine: engineAddr(), Owner: owner, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fnproxy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	pc, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}, Timeout: time.Minute}
	return &bundle{engine: engine, proxy: pc, http: hc, owner: owner, logs: logs}
}

// labels are a sandbox's labels of the bundle's owner.
func (b *bundle) labels(testing.TB) map[string]string {
	return map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelOwner: b.owner, sandbox.LabelRunID: "proxy-test", testLabel: "1"}
}

// sandboxConfig is a locked-down container like runner/sandbox's.
func sandboxConfig(labels map[string]string) (*container.Config, *container.HostConfig) {
	pids := int64(64)
	return &container.Config{
			Image: sandbox.DefaultImage, User: "65534:65534", Cmd: []string{"sleep", "300"},
			Labels: labels, NetworkDisabled: true, StopSignal: "SIGKILL",
		}, &container.HostConfig{
			NetworkMode: network.NetworkNone, CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges:true"},
			ReadonlyRootfs: true, LogConfig: container.LogConfig{Type: "none"},
			Resources: container.Resources{Memory: 256 << 20, MemorySwap: 256 << 20, PidsLimit: &pids},
		}
}

// remove removes a container straight on the engine when the test ends.
func (b *bundle) remove(t testing.TB, id string) {
	t.Cleanup(func() {
		err := b.engine.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("removing container %s: %v", id, err)
		}
	})
}

// TestExecThroughProxy runs a sandbox's lifecycle through the proxy with the SDK, as
// runner/sandbox does: create, start, copy in, exec with an attached stream whose stdin is
// half-closed, exec inspect, attach, stop and start, kill, wait, inspect, list, remove.
func TestExecThroughProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, "proxy-"+randHex(t, 4))
	ctx := context.Background()
	if _, err := b.proxy.Ping(ctx); err != nil {
		t.Fatalf("ping through the proxy: %v", err)
	}
	// The engine's version names the proxy, so that doctor can tell.
	v, err := b.proxy.ServerVersion(ctx)
	found := false
	for _, c := range v.Components {
		found = found || c.Name == dockerproxy.ComponentName && c.Details["Owner"] == b.owner
	}
	if err != nil || !found || v.APIVersion == "" {
		t.Errorf("version through the proxy: %+v %v", v, err)
	}
	ccfg, hcfg := sandboxConfig(b.labels(t))
	ccfg.Volumes = map[string]struct{}{"/workspace": {}}
	created, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "fnproxy-"+randHex(t, 6))
	if err != nil {
		t.Fatalf("create through the proxy: %v", err)
	}
	b.remove(t, created.ID)
	if err := b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := b.proxy.CopyToContainer(ctx, created.ID, "/workspace", tarOf(t, "hello.txt", "hello from the host\n"), container.CopyToContainerOptions{}); err != nil {
		t.Fatalf("copy in: %v", err)
	}

	// An exec whose stdin the client half-closes: cat ends only when that end arrives.
	ex, err := b.proxy.ContainerExecCreate(ctx, created.ID, container.ExecOptions{
		Cmd: []string{"sh", "-c", "cat /workspace/hello.txt; cat; echo done >&2"}, AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		t.Fatalf("exec create: %v", err)
	}
	att, err := b.proxy.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatalf("exec attach: %v", err)
	}
	if _, err := io.WriteString(att.Conn, "from stdin\n"); err != nil {
		t.Fatal(err)
	}
	if err := att.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, att.Reader); err != nil {
		t.Fatalf("reading the exec's stream: %v", err)
	}
	att.Close()
	if stdout.String() != "hello from the host\nfrom stdin\n" || stderr.String() != "done\n" {
		t.Errorf("exec stdout %q stderr %q", stdout.String(), stderr.String())
	}
	info, err := b.proxy.ContainerExecInspect(ctx, ex.ID)
	if err != nil || info.Running || info.ExitCode != 0 {
		t.Errorf("exec inspect: %+v %v", info, err)
	}

	// Quiesce's stop and start, then inspect and list.
	zero := 0
	if err := b.proxy.ContainerStop(ctx, created.ID, container.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start again: %v", err)
	}
	list, err := b.proxy.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+b.owner))})
	if err != nil || len(list) != 1 || list[0].ID != created.ID {
		t.Errorf("list through the proxy: %v %v", list, err)
	}
	waitc, errc := b.proxy.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	if err := b.proxy.ContainerKill(ctx, created.ID, "KILL"); err != nil {
		t.Fatalf("kill: %v", err)
	}
	select {
	case res := <-waitc:
		if res.StatusCode != 137 {
			t.Errorf("wait: status %d, want 137", res.StatusCode)
		}
	case err := <-errc:
		t.Fatalf("wait: %v", err)
	}
	if err := b.proxy.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := b.engine.ContainerInspect(ctx, created.ID); !cerrdefs.IsNotFound(err) {
		t.Errorf("the container is still there after its removal through the proxy: %v", err)
	}
	if strings.Contains(b.logs.String(), "refused") {
		t.Errorf("the proxy refused part of a sandbox's lifecycle:\n%s", b.logs.String())
	}
}

// TestAttachThroughProxy attaches before the start, as the disk watcher does: what the host
// writes reaches the container, and its answers come back, over the upgraded connection.
func TestAttachThroughProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	ctx := context.Background()
	ccfg, hcfg := sandboxConfig(b.labels(t))
	ccfg.Cmd = []string{"sh", "-c", `while read -r l; do echo "got $l"; done`}
	ccfg.OpenStdin, ccfg.StdinOnce, ccfg.AttachStdin, ccfg.AttachStdout = true, true, true, true
	created, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, created.ID)
	conn, err := b.proxy.ContainerAttach(ctx, created.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	defer conn.Close()
	if err := b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn.Conn, "one\ntwo\n")
	conn.CloseWrite()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, io.Discard, conn.Reader); err != nil {
		t.Fatal(err)
	}
	if out.String() != "got one\ngot two\n" {
		t.Errorf("attach stream %q", out.String())
	}
}

// tarOf is a tar stream of one file.
func tarOf(t *testing.T, name, content string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Uid: 65534, Gid: 65534}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, content)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// doJSON sends a raw request to the proxy and returns the status and body.
func (b *bundle) doJSON(t *testing.T, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://docker"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
