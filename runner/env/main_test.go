package env_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

var (
	docker *client.Client
	// executorPath is the static frognano-executor: a setup container's own program and its
	// seal check (sandbox.Seal).
	executorPath string
)

func TestMain(m *testing.M) {
	dockertest.Main(m, dockertest.Options{Tests: "the environment tests", Executor: true}, func(e dockertest.Env) {
		docker, executorPath = e.Docker, e.Executor
	})
}

// testOwner labels every container these tests make.
const testOwner = "env-test"

// sandboxConfig is a small sandbox for these tests.
func sandboxConfig(t testing.TB) sandbox.Config {
	cfg := sandbox.DefaultConfig()
	cfg.Memory = 512 << 20
	cfg.CPUs = 1
	cfg.Owner = testOwner
	cfg.Instance = strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	cfg.Lifetime = 10 * time.Minute
	cfg.ExecutorPath = executorPath
	return cfg
}

// manager returns a Manager whose lock files live in lockDir ("" for a fresh one).
func manager(t testing.TB, cfg env.Config, lockDir string) *env.Manager {
	if lockDir == "" {
		lockDir = t.TempDir()
	}
	cfg.LockDir = lockDir
	if cfg.Timeout == 0 {
		cfg.Timeout = 3 * time.Minute
	}
	return env.New(docker, cfg, nil)
}

// removeEnvImage removes an environment image when the test ends (its pins must be gone).
func removeEnvImage(t testing.TB, ref string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = docker.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
	})
}

// run runs a shell command in a fresh, locked-down sandbox made from image, with a copy of
// repoDir when not empty, and returns its combined output and exit code.
func run(t testing.TB, cfg sandbox.Config, image, base, repoDir, script string) (string, int) {
	t.Helper()
	ctx := context.Background()
	cfg.Image, cfg.BaseImage = image, base
	sb, err := sandbox.New(ctx, docker, cfg, "envtest", "check")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if repoDir != "" {
		if err := sb.CopyRepo(ctx, repoDir); err != nil {
			t.Fatal(err)
		}
	}
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", script}, nil, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout) + string(res.Stderr), res.ExitCode
}

// scopeOf is the scope `frognano run` gives the checkout dir.
func scopeOf(t testing.TB, dir string) env.Scope {
	t.Helper()
	s, err := env.LocalScope(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
