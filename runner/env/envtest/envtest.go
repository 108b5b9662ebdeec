// Package envtest gives tests what setup scripts need without the internet: package servers
// run as containers of our own (Python's http.server in the sandbox image, serving files the
// test provides) on a private Docker network made with --internal, which no container on it can
// leave. A test's setup joins that network (env.Config.Network) and reaches the server by its
// alias; nothing in a test reaches a host outside this machine.
//
// envtest must never contact a registry or any host on the internet: it serves only the bytes
// the test hands it.
package envtest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// ServerImage runs the package servers: the sandbox image has Python.
const ServerImage = "frognano-sandbox:latest"

// Server is one package server on its own internal network.
type Server struct {
	Network string // the Docker network to give setup (env.Config.Network)
	Host    string // the server's name on that network
	Port    int
}

// URL is the server's base URL as setup sees it, e.g. http://pkgs:8080.
func (s *Server) URL() string { return fmt.Sprintf("http://%s:%d", s.Host, s.Port) }

// NewServer creates an internal network and a static file server on it serving files (path →
// content, slash-separated, relative to the server's root), and removes both when the test
// ends. It fails the test when Docker does not answer or the server does not come up.
func NewServer(t testing.TB, docker *client.Client, host string, files map[string][]byte) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "frognano-envtest-" + hex.EncodeToString(rnd[:])
	if _, err := docker.NetworkCreate(ctx, name, network.CreateOptions{Internal: true, Labels: map[string]string{"dev.frognano.test": "1"}}); err != nil {
		t.Fatalf("creating the private network %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := docker.NetworkRemove(ctx, name); err != nil {
			t.Errorf("removing network %s: %v", name, err)
		}
	})
	s := &Server{Network: name, Host: host, Port: 8080}
	created, err := docker.ContainerCreate(ctx, &container.Config{
		Image:      ServerImage,
		User:       "1000:1000",
		Cmd:        []string{"python3", "-m", "http.server", "8080", "--bind", "0.0.0.0", "--directory", "/srv/www"},
		Labels:     map[string]string{"dev.frognano.test": "1"},
		WorkingDir: "/",
	}, &container.HostConfig{
		NetworkMode: container.NetworkMode(name),
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges:true"},
		LogConfig:   container.LogConfig{Type: "none"},
	}, &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{name: {Aliases: []string{host}}}}, nil, name+"-"+host)
	if err != nil {
		t.Fatalf("creating the package server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := docker.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			t.Errorf("removing the package server: %v", err)
		}
	})
	if err := docker.CopyToContainer(ctx, created.ID, "/srv", tarOf(files), container.CopyToContainerOptions{}); err != nil {
		t.Fatalf("copying the package server's files: %v", err)
	}
	if err := docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("starting the package server: %v", err)
	}
	// Ready when it answers from inside its own container.
	probe := []string{"python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/', timeout=2)"}
	for i := 0; ; i++ {
		ex, err := docker.ContainerExecCreate(ctx, created.ID, container.ExecOptions{Cmd: probe})
		if err == nil {
			err = docker.ContainerExecStart(ctx, ex.ID, container.ExecStartOptions{})
		}
		if err == nil {
			for {
				info, ierr := docker.ContainerExecInspect(ctx, ex.ID)
				if ierr != nil || !info.Running {
					if ierr == nil && info.ExitCode == 0 {
						return s
					}
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if i == 100 || ctx.Err() != nil {
			t.Fatalf("the package server did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tarOf packs files under www/, readable by everyone.
func tarOf(files map[string][]byte) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	addDir := func(d string) {
		for _, p := range parents(d) {
			if !dirs[p] {
				dirs[p] = true
				_ = tw.WriteHeader(&tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: 0o755})
			}
		}
	}
	addDir("www")
	for _, n := range names {
		full := path.Join("www", n)
		addDir(path.Dir(full))
		_ = tw.WriteHeader(&tar.Header{Name: full, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))})
		_, _ = tw.Write(files[n])
	}
	_ = tw.Close()
	return &buf
}

// parents returns d and each of its parents, outermost first ("a/b" → "a", "a/b").
func parents(d string) []string {
	var out []string
	parts := strings.Split(d, "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/"))
	}
	return out
}
