package runner

import (
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// Preflight checks what a run needs before anything starts, so that a broken setup fails
// with one clear line instead of halfway through a run: the sandbox image exists, the
// executor binary is a static Linux program, and the model server answers. The images include
// those the operator's image map names. Every error it
// returns is a *SetupError.
func (r *Runner) Preflight(ctx context.Context) error {
	if err := r.checkImage(ctx); err != nil {
		return &SetupError{err}
	}
	if err := checkExecutor(r.cfg.Sandbox.ExecutorPath); err != nil {
		return &SetupError{err}
	}
	if err := r.checkSetupNetwork(ctx); err != nil {
		return &SetupError{err}
	}
	if err := CheckModel(ctx, r.cfg.Leaf.BaseURL); err != nil {
		return &SetupError{err}
	}
	return nil
}

// BaseImages returns the base images the operator configured: the sandbox image and every
// image FROGNANO_SANDBOX_IMAGES names. They are what `frognano eval` lets a task's image name
// without --allow-image.
func (r *Runner) BaseImages() []string {
	return append([]string{cmp.Or(r.cfg.Sandbox.Image, sandbox.DefaultImage)}, r.cfg.Images.Images()...)
}

// checkImage checks the sandbox image and every image FROGNANO_SANDBOX_IMAGES names.
func (r *Runner) checkImage(ctx context.Context) error {
	for _, img := range r.BaseImages() {
		if _, err := r.docker.ImageInspect(ctx, img); err != nil {
			if cerrdefs.IsNotFound(err) {
				return fmt.Errorf("sandbox image %s is missing: build it with `frognano sandbox build` (or `make sandbox-image` in a checkout of frognano)", img)
			}
			return fmt.Errorf("inspecting sandbox image %s: %w", img, err)
		}
	}
	return nil
}

// checkSetupNetwork checks that the network repositories' setup scripts join exists.
func (r *Runner) checkSetupNetwork(ctx context.Context) error {
	cfg := r.envs.Config()
	if cfg.Disabled || cfg.Network == env.NoNetwork {
		return nil
	}
	if err := env.CheckNetwork(cfg.Network); err != nil {
		return err
	}
	if _, err := r.docker.NetworkInspect(ctx, cfg.Network, network.InspectOptions{}); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("setup network %s does not exist: create it (docker network create %s) or set FROGNANO_SETUP_NETWORK", cfg.Network, cfg.Network)
		}
		return fmt.Errorf("inspecting setup network %s: %w", cfg.Network, err)
	}
	return nil
}

func checkExecutor(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("tool executor %s is not usable (%v): build it with `make build`, or point FROGNANO_EXECUTOR at it", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("tool executor %s is dynamically linked; build it with CGO_ENABLED=0 (`make build` does)", path)
		}
	}
	return nil
}

// ModelServerError says that the model server did not answer: it is unreachable, or it gave no
// answer within 10 seconds. CheckModel returns it marked transient (fault.IsTransient holds):
// a model server that is down may be up for the next attempt, so the service retries the run
// and starts without it.
type ModelServerError struct {
	URL string // the configured base URL
	Err error  // what the transport said
}

func (e *ModelServerError) Error() string {
	var ne net.Error
	if errors.As(e.Err, &ne) && ne.Timeout() {
		return fmt.Sprintf("model server at %s did not answer within %s", e.URL, modelCheckTimeout)
	}
	return fmt.Sprintf("model server at %s is unreachable: %v", e.URL, errors.Unwrap(e.Err))
}

func (e *ModelServerError) Unwrap() error { return e.Err }

// modelCheckTimeout bounds CheckModel's request.
const modelCheckTimeout = 10 * time.Second

// CheckModel asks the model server for its model list. Any HTTP answer counts as reachable
// (some servers do not serve /models); only a transport failure is an error, a transient
// *ModelServerError.
func CheckModel(ctx context.Context, baseURL string) error {
	ctx, cancel := context.WithTimeout(ctx, modelCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", nil)
	if err != nil {
		return fmt.Errorf("model URL %q: %w", baseURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fault.Transient(&ModelServerError{URL: baseURL, Err: err})
	}
	resp.Body.Close()
	return nil
}
