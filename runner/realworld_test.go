package runner_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/env/envtest"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// moduleDir returns the extracted source of module@version from the host's module cache,
// downloading it first (through the Go module proxy, at test preparation) when it is missing.
func moduleDir(t *testing.T, modVersion string) string {
	t.Helper()
	dl := exec.Command("go", "mod", "download", "-json", modVersion)
	dl.Dir = t.TempDir()
	dl.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := dl.Output()
	if err != nil {
		t.Fatalf("downloading %s: %v\n%s", modVersion, err, out)
	}
	var dir string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `"Dir": "`); ok {
			dir = strings.TrimSuffix(v, `",`)
		}
	}
	if dir == "" {
		t.Fatalf("go mod download printed no Dir for %s:\n%s", modVersion, out)
	}
	return dir
}

// realWorldCheckout is the module's source at modVersion with testdata/realworld/NAME copied
// over it, committed in a fresh git repository.
func realWorldCheckout(t *testing.T, modVersion, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(moduleDir(t, modVersion))); err != nil {
		t.Fatal(err)
	}
	// The overlay's files (but ABOUT.md, which describes the case) replace or join the
	// module's; the module cache's files are read-only, and CopyFS kept their modes.
	overlay := filepath.Join("..", "testdata", "realworld", name)
	err := filepath.WalkDir(overlay, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "ABOUT.md" {
			return err
		}
		rel, _ := filepath.Rel(overlay, p)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		_ = os.Chmod(dst, 0o644)
		info, _ := d.Info()
		return os.WriteFile(dst, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "v1.1.0 with the v1.1.1 test file")
	return dir
}

// TestRunRealWorldGoModule: github.com/hashicorp/go-multierror as the Go module proxy serves it
// at v1.1.0, the release before an upstream bug fix, with the module's v1.1.1 test file as the
// task's failing test (testdata/realworld/go-multierror). Its own .frognano/setup.sh downloads
// the module's dependency with network from a GOPROXY container of the test's own; a scripted
// model replays the upstream fix through Leaf tools; the verification reports exactly the
// upstream regression test as fixed and nothing broken.
func TestRunRealWorldGoModule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := envtest.NewServer(t, docker, "goproxy", goProxyFiles(t, "github.com/hashicorp/errwrap@v1.0.0"))
	dir := realWorldCheckout(t, "github.com/hashicorp/go-multierror@v1.1.0", "go-multierror")
	freshEnvironment(t, dir, goImage)
	b := envBundle(t, dir, leaftest.LoadModel(t, "env-realworld-multierror.json"), goImage, env.Config{Network: srv.Network, Env: []string{"GOPROXY=" + srv.URL()}})
	res, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.SetupFailed != "" {
		t.Fatalf("setup failed: %s\n%s", res.SetupFailed, res.SetupLog())
	}
	if e := res.Environment; e == nil || e.Setup == nil || !strings.Contains(string(e.Setup.Log), "frognano: setup finished") {
		t.Fatalf("environment %+v: want one built by the repository's setup", e)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
	c := res.Comparison
	if c == nil || !slices.Equal(c.Fixed, []string{"github.com/hashicorp/go-multierror.TestErrorWrappedErrors"}) || len(c.Broken) != 0 || len(c.StillFailing) != 0 {
		t.Fatalf("comparison = %+v, want exactly the upstream regression test fixed (before %+v)", c, res.TestsBefore)
	}
	p := string(res.PatchBytes())
	if n := strings.Count(p, "diff --git"); n != 1 || !strings.Contains(p, "+\tif e == nil {\n+\t\treturn nil\n+\t}") {
		t.Errorf("patch is not the upstream fix:\n%s", p)
	}
	t.Logf("setup %s; tests before %s (%d results), after %s (%d); new after the fix: %v",
		res.Environment.Setup.Duration, res.TestsBefore.Duration, len(res.TestsBefore.Tests), res.TestsAfter.Duration, len(res.TestsAfter.Tests), c.New)

	// A second run, with the upstream fix in the working tree, reuses the environment: no setup
	// runs (its network is none now, so none could fetch a module), and the module's tests,
	// the regression test among them, pass offline.
	if err := os.WriteFile(filepath.Join(dir, "fix.diff"), res.PatchBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "apply", "fix.diff")
	if err := os.Remove(filepath.Join(dir, "fix.diff")); err != nil {
		t.Fatal(err)
	}
	b = envBundle(t, dir, leaftest.LoadModel(t, "finish-immediately.json"), goImage, env.Config{Network: env.NoNetwork})
	again, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ae := again.Environment; ae == nil || !ae.Cached || ae.Setup != nil || ae.Image != res.Environment.Image {
		t.Fatalf("second run's environment %+v: want the cached %s", ae, res.Environment.Image)
	}
	if tb := again.TestsBefore; tb == nil || tb.Error != "" || tb.ExitCode != 0 || tb.Tests["github.com/hashicorp/go-multierror.TestErrorWrappedErrors"] != "pass" {
		t.Errorf("second run's tests (offline, from the cached environment): %+v", tb)
	}
}
