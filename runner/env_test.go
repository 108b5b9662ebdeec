package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/env/envtest"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// envBundle is a runner whose setup joins a package server's private network.
func envBundle(t *testing.T, repoDir string, script leaftest.Script, image string, envCfg env.Config) bundle {
	t.Helper()
	model := leaftest.NewServer(t, script)
	cfg := runner.DefaultConfig()
	cfg.Sandbox.Image = image
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 1 << 30
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Owner = "runner-test"
	cfg.Leaf.BaseURL = model.URL
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestTimeout = 3 * time.Minute
	if envCfg.LockDir == "" {
		envCfg.LockDir = t.TempDir()
	}
	if envCfg.Timeout == 0 {
		envCfg.Timeout = 5 * time.Minute
	}
	cfg.Env = envCfg
	id := strings.NewReplacer("/", "-", "_", "-").Replace(fmt.Sprintf("rt-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano()))
	return bundle{runner: runner.New(docker, cfg, nil), model: model, spec: runner.Spec{RunID: id, RepoDir: repoDir, Task: "Fix the failing test."}}
}

// freshEnvironment removes the environment image an earlier test run left for the checkout dir
// on baseImage (the key is computed as the runner computes it), now and when the test ends,
// so that the first run of the test really runs setup.
func freshEnvironment(t *testing.T, dir, baseImage string) {
	t.Helper()
	ctx := context.Background()
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	script, err := env.ScriptAt(ctx, dir, head)
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := env.ReadInputs(ctx, dir, head)
	if err != nil {
		t.Fatal(err)
	}
	base, err := docker.ImageInspect(ctx, baseImage)
	if err != nil {
		t.Fatal(err)
	}
	scope, err := env.LocalScope(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := env.Ref(env.Key(scope, base.ID, script, inputs))
	remove := func() {
		if _, err := docker.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("removing environment image %s: %v", ref, err)
		}
	}
	remove()
	t.Cleanup(remove)
}

// keepImage pins an image for the rest of the test, so that no eviction by a concurrent test
// can remove it between two runs that must share it.
func keepImage(t *testing.T, image string) {
	t.Helper()
	cfg := sandbox.DefaultConfig()
	cfg.Owner = "runner-test"
	release, err := sandbox.Pin(context.Background(), docker, cfg, "rt-keep", image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = release() })
}

// A failing setup ends the run before the model is called (the scripted model accepts no
// request): the result says setup failed, with its exit status and the end of its log. The
// runner and env log through the logger the caller's context carries, with the run's
// sandbox_run added to the caller's run_id.
func TestRunSetupFailedEndsBeforeTheModel(t *testing.T) {
	t.Parallel()
	dir := checkout(t, "pyaverage")
	if err := os.MkdirAll(filepath.Join(dir, ".frognano"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "echo installing the toolchain\necho 'E: Unable to locate package nosuchpackage' >&2\nexit 100\n"
	if err := os.WriteFile(filepath.Join(dir, env.ScriptFile), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "setup")
	b := envBundle(t, dir, leaftest.Script{}, sandbox.DefaultImage, env.Config{Network: env.NoNetwork})
	var logs bytes.Buffer // slog's handler serializes the writes; read after Run returns
	ctx := logging.WithLogger(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)).With(logging.RunID(12)))
	res, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"environment setup starting", "setup failed; the run ends before the model is called"} {
		want := fmt.Sprintf("msg=%q run_id=12 sandbox_run=%s ", msg, b.spec.RunID)
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the run's log lacks %q:\n%s", want, logs.String())
		}
	}
	if res.ExitReason() != runner.ExitSetupFailed || res.Leaf != nil || res.TestsBefore != nil || len(b.model.Requests()) != 0 {
		t.Fatalf("exit reason %q, leaf %v, tests %v, %d model requests", res.ExitReason(), res.Leaf != nil, res.TestsBefore != nil, len(b.model.Requests()))
	}
	if s := res.Environment.Setup; s == nil || s.ExitCode != 100 {
		t.Fatalf("setup run %+v", s)
	}
	summary := report.Summary(res, report.Fit{})
	for _, text := range []string{report.Markdown(res), summary} {
		for _, want := range []string{"## Setup failed", "exited with status 100", "- Exit status: 100", "E: Unable to locate package nosuchpackage"} {
			if !strings.Contains(text, want) {
				t.Errorf("lacks %q:\n%s", want, text)
			}
		}
	}
	if len(containersOf(t, b.spec.RunID)) != 0 {
		t.Error("containers were left")
	}
	if !strings.Contains(string(res.SetupLog()), "installing the toolchain") {
		t.Errorf("setup log %q", res.SetupLog())
	}
}

// goProxyFiles returns a GOPROXY tree of the given modules from the host's module cache; a
// module missing there is downloaded first, through the Go module proxy this machine uses
// (test preparation; the test itself reaches nothing outside the machine).
func goProxyFiles(t *testing.T, mods ...string) map[string][]byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	files, err := envtest.GoProxyFiles(cache, mods...)
	if err != nil {
		dl := exec.Command("go", append([]string{"mod", "download"}, mods...)...)
		dl.Dir = t.TempDir()
		if out, err := dl.CombinedOutput(); err != nil {
			t.Fatalf("downloading %v for the test's module server: %v\n%s", mods, err, out)
		}
		if files, err = envtest.GoProxyFiles(cache, mods...); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// A Go repository whose module dependency only setup can download, from a GOPROXY server of the
// test's own: the agent's phase and both test runs are offline and read the environment's
// module cache; the verification reports the real fix; a second run reuses the environment.
func TestRunGoEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := envtest.NewServer(t, docker, "goproxy", goProxyFiles(t, "github.com/google/go-cmp@v0.7.0"))
	envCfg := env.Config{Network: srv.Network, Env: []string{"GOPROXY=" + srv.URL()}}
	dir := checkout(t, "gocmp")
	freshEnvironment(t, dir, goImage)
	b := envBundle(t, dir, leaftest.LoadModel(t, "env-gocmp.json"), goImage, envCfg)
	b.spec.Repo = "test/gocmp"
	res, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.SetupFailed != "" {
		t.Fatalf("setup failed: %s\n%s", res.SetupFailed, res.SetupLog())
	}
	if e := res.Environment; e == nil || e.Setup == nil || e.BaseImage != goImage {
		t.Fatalf("environment %+v", e)
	}
	keepImage(t, res.Environment.Image)
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
	t.Logf("setup %s, tools %s, tests before %s, after %s, in all %s", res.Environment.Setup.Duration, res.Leaf.ToolTime,
		res.TestsBefore.Duration, res.TestsAfter.Duration, res.Elapsed)
	c := res.Comparison
	if c == nil || !slices.Equal(c.Fixed, []string{"example.com/gocmp.TestSameInAnyOrder"}) || len(c.Broken) != 0 || len(c.StillFailing) != 0 {
		t.Fatalf("comparison = %+v (before %+v, after %+v)", c, res.TestsBefore, res.TestsAfter)
	}

	// The second run's model adds Go modules (e2e-deps-go.json): the dependency check of
	// checkGoModulesInTheEnvironment runs in that environment, which one build serves.
	b = envBundle(t, dir, leaftest.LoadModel(t, "e2e-deps-go.json"), goImage, envCfg)
	b.spec.Repo = "test/gocmp"
	again, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ae := again.Environment; ae == nil || !ae.Cached || ae.Setup != nil || ae.Image != res.Environment.Image {
		t.Fatalf("second run's environment %+v: want the cached one", ae)
	}
	if tb := again.TestsBefore; tb == nil || tb.Error != "" || tb.Tests["example.com/gocmp.TestDifferentWords"] != "pass" {
		t.Errorf("second run's tests (offline, from the cached environment): %+v", tb)
	}
	checkGoModulesInTheEnvironment(t, again)
}
