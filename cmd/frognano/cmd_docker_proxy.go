package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/dockerproxy"
)

// dockerProxyCmd is `frognano docker-proxy`: the Docker API filter (package dockerproxy) on a
// socket of its own, in front of the engine's. The service then gets DOCKER_HOST pointing at
// it and never the engine's socket.
func dockerProxyCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := newFlagSet("docker-proxy", stderr)
	listen := fs.String("listen", "unix:/run/frognano/docker.sock", "where to serve the filtered API: unix:/PATH (mode 0660) or tcp:HOST:PORT (only on a private network)")
	engine := fs.String("engine", "", "the engine's API: unix:///var/run/docker.sock (default: DOCKER_HOST, else that socket) or tcp://HOST:PORT")
	networks := fs.String("networks", "", "comma-separated Docker networks sandboxes may join besides none: the setup network (default: FROGNANO_SETUP_NETWORK, else bridge)")
	owner := fs.String("owner", "", "let the client act only on sandboxes of this dev.frognano.owner (its FROGNANO_SANDBOX_OWNER); default: any frognano sandbox")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *engine == "" {
		*engine = getenv("DOCKER_HOST")
	}
	if *engine == "" {
		*engine = "unix:///var/run/docker.sock"
	}
	if *networks == "" {
		*networks = config.SetupNetworks(getenv)
	}
	var nets []string
	for _, n := range strings.Split(*networks, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "none" {
			nets = append(nets, n)
		}
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	proxy, err := dockerproxy.New(dockerproxy.Config{Engine: *engine, Networks: nets, Owner: *owner, Logger: log, Version: version})
	if err != nil {
		return usageError{"docker-proxy: " + err.Error()}
	}
	ln, err := listenOn(*listen)
	if err != nil {
		return setupError{err}
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("docker-proxy serving", "listen", *listen, "engine", *engine, "networks", nets, "owner", *owner)
	select {
	case err := <-errc:
		return fmt.Errorf("serving the docker proxy: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping the docker proxy: %w", err)
	}
	return nil
}

// listenOn opens unix:/PATH (an old socket file there is replaced; mode 0660) or tcp:HOST:PORT.
func listenOn(addr string) (net.Listener, error) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		path := strings.TrimPrefix(strings.TrimPrefix(addr, "unix:"), "//")
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(path)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("listening on %s: %w", path, err)
		}
		if err := os.Chmod(path, 0o660); err != nil {
			ln.Close()
			return nil, fmt.Errorf("setting the mode of %s: %w", path, err)
		}
		return ln, nil
	case strings.HasPrefix(addr, "tcp:"):
		ln, err := net.Listen("tcp", strings.TrimPrefix(strings.TrimPrefix(addr, "tcp:"), "//"))
		if err != nil {
			return nil, fmt.Errorf("listening on %s: %w", addr, err)
		}
		return ln, nil
	}
	return nil, fmt.Errorf("--listen %q: want unix:/PATH or tcp:HOST:PORT", addr)
}
