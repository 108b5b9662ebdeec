package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/dockerproxy"
	"github.com/frognano/frognano/internal/gittest"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// lockedBuffer is a bytes.Buffer for a logger written from several goroutines.
type lockedBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.b.String()
}

// TestRunThroughDockerProxy runs the whole sandbox lifecycle of `frognano run` through
// `frognano docker-proxy`'s filter, with DOCKER_HOST pointing at the proxy and the proxy
// limited to the run's owner: a setup script on the bridge network (root with setup's
// capabilities, then the seal check: a stop, the list of changes, a copy and a restart, an exec
// as root; then a commit and a tag), the agent sandbox with its disk watcher and the
// executor's attached stream, tests before and after, the diff from a quiesced sandbox, and a
// second run that finds the environment cached (a pin and a tag). The proxy refuses nothing
// of it, and no sandbox is left.
func TestRunThroughDockerProxy(t *testing.T) {
	t.Parallel()
	docker := svcDocker(t)
	executor, frognano := svcBinaries(t, true)
	owner := "proxy-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + randSuffix(t)

	logs := &lockedBuffer{mu: make(chan struct{}, 1)}
	engine := os.Getenv("DOCKER_HOST")
	if engine == "" {
		engine = "unix:///var/run/docker.sock"
	}
	proxy, err := dockerproxy.New(dockerproxy.Config{Engine: engine, Owner: runOwner(owner), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fnproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "docker.sock")
	ln, err := listenOn("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("the proxy's socket: %v %v, want mode 0660", fi.Mode(), err)
	}

	repo := cliCheckout(t, "pyaverage")
	if err := os.MkdirAll(filepath.Join(repo, ".frognano"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The marker makes the environment this test's own (a key no other test shares). Setup uses
	// an operator's value and removes it, so that the seal check runs through the proxy too.
	script := "set -eu\necho \"installing for " + owner + "\"\necho fetched > /opt/dep.txt\nchown root:root /opt/dep.txt\n" +
		"printf 'machine mirror.invalid password %s\\n' \"$MIRROR_TOKEN\" > /root/.netrc\nrm /root/.netrc\n"
	if err := os.WriteFile(filepath.Join(repo, envpkg.ScriptFile), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "setup")
	var refs []string
	defer func() {
		for _, ref := range refs {
			_, _ = docker.ImageRemove(context.Background(), ref, image.RemoveOptions{PruneChildren: true})
		}
	}()

	frognanoRun := func(script leaftest.Script, extra ...string) (string, error) {
		t.Helper()
		model := leaftest.NewServer(t, script)
		args := append([]string{"run", "--repo", repo, "--task", "average([2, 4, 6]) returns 6 instead of 4.", "--out", filepath.Join(t.TempDir(), "out"),
			"--executor", executor, "--setup-network", "bridge"}, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, frognano, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DOCKER_HOST=unix://" + sock,
			"FROGNANO_MODEL_URL=" + model.URL, "FROGNANO_SANDBOX_OWNER=" + owner,
			"FROGNANO_SANDBOX_MEMORY=1g", "FROGNANO_SANDBOX_CPUS=1", "FROGNANO_SETUP_ENV=MIRROR_TOKEN=proxy-test-mirror-token-" + owner}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		refs = append(refs, envRefRE.FindAllString(stderr.String(), -1)...)
		return stderr.String(), err
	}

	log, err := frognanoRun(leaftest.LoadModel(t, "e2e-pyaverage.json"))
	if err != nil {
		t.Fatalf("frognano run through the proxy: %v\n%s\nproxy log:\n%s", err, log, logs.String())
	}
	for _, want := range []string{"setup | installing for " + owner, "setup | frognano: seal check: ", "built by this run's setup in", "finished: exit reason agent after 5 steps",
		"tests before: exit 1", "tests after:  exit 0", "fixed 2, broken 0, still failing 0"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	log, err = frognanoRun(leaftest.LoadModel(t, "finish-immediately.json"), "--test-cmd", "none")
	if err != nil || !strings.Contains(log, "cached (no setup ran)") {
		t.Errorf("the second run: %v\n%s", err, log)
	}
	if strings.Contains(logs.String(), "refused") {
		t.Errorf("the proxy refused part of frognano's lifecycle:\n%s", logs.String())
	}
	left, err := docker.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+runOwner(owner)))})
	if err != nil || len(left) != 0 {
		t.Errorf("containers left: %v %v", left, err)
	}
	if len(refs) == 0 {
		t.Errorf("the run named no environment image")
	}
}

func randSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestDockerProxyCommand runs `frognano docker-proxy` as the command line does: it serves the
// filtered API on its socket (a ping passes, /info is refused with the reason), stops when its
// context ends, and refuses a mistaken engine or network with a usage error.
func TestDockerProxyCommand(t *testing.T) {
	t.Parallel()
	svcDocker(t)
	dir, err := os.MkdirTemp("", "fnproxycmd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "api.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil { // a regular file is never replaced
		t.Fatal(err)
	}
	var stderr lockedBuffer
	stderr.mu = make(chan struct{}, 1)
	err = run(context.Background(), []string{"docker-proxy", "--listen", "unix:" + sock}, envMap(nil), io.Discard, &stderr)
	if err == nil || exitCode(err) != 3 {
		t.Errorf("listening over a regular file: %v (exit %d)", err, exitCode(err))
	}
	os.Remove(sock)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"docker-proxy", "--listen", "unix:" + sock}, envMap(map[string]string{"DOCKER_HOST": os.Getenv("DOCKER_HOST"), "FROGNANO_SETUP_NETWORK": "build-net"}), io.Discard, &stderr)
	}()
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	var ping *http.Response
	for i := 0; i < 200; i++ {
		if ping, err = hc.Get("http://docker/_ping"); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("docker-proxy ended: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatalf("the proxy's socket does not answer: %v\n%s", err, stderr.String())
	}
	body, _ := io.ReadAll(ping.Body)
	ping.Body.Close()
	if ping.StatusCode != http.StatusOK || string(body) != "OK" {
		t.Errorf("ping through the proxy: %d %q", ping.StatusCode, body)
	}
	info, err := hc.Get("http://docker/v1.41/info")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(info.Body)
	info.Body.Close()
	if info.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "frognano docker-proxy refused GET /v1.41/info") {
		t.Errorf("/info through the proxy: %d %s", info.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("docker-proxy after its context ended: %v", err)
	}
	if !strings.Contains(stderr.String(), `"networks":["build-net"]`) {
		t.Errorf("the setup network is not the allowed one:\n%s", stderr.String())
	}

	other := "unix:" + filepath.Join(dir, "x.sock")
	for _, args := range [][]string{
		{"docker-proxy", "--engine", "ssh://host", "--listen", other},
		{"docker-proxy", "--networks", "host", "--listen", other},
		{"docker-proxy", "--listen", "udp:x"},
	} {
		// Each fails before it serves; a background context would otherwise never end it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := run(ctx, args, envMap(nil), io.Discard, io.Discard)
		cancel()
		if err == nil || exitCode(err) == 0 {
			t.Errorf("%v: %v", args, err)
		}
	}
}
