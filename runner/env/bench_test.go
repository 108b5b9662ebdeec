package env_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkSandboxReadyCachedEnvironment measures what a run with a cached environment waits
// for before the model's first tool call: find and pin the environment image (no setup, no
// network), create and start the agent sandbox from it, copy a 50 MB repository in, start the
// executor. The environment's own layer holds 300 MB. NoEnvironment is the same on the base
// image, as every run was before environments (runner/sandbox BenchmarkSandboxReady).
func BenchmarkSandboxReadyCachedEnvironment(b *testing.B) {
	ctx := context.Background()
	repo := bigRepo(b, 50<<20, "head -c 314572800 /dev/urandom > /opt/env-layer.bin\n")
	head := git(b, repo, "rev-parse", "HEAD")
	cfg := sandboxConfig(b)
	cfg.ExecutorPath = buildExecutor(b)
	m := manager(b, env.Config{Network: env.NoNetwork, Timeout: 10 * time.Minute}, "")
	req := env.Request{RunID: "bench-env", RepoDir: repo, Commit: head, Sandbox: cfg}
	built, err := m.Prepare(ctx, req)
	if err != nil {
		var se *env.SetupError
		if errors.As(err, &se) {
			b.Fatalf("%v\n%s", err, se.Env.Setup.Log)
		}
		b.Fatal(err)
	}
	removeEnvImage(b, built.Ref)
	list, err := m.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range list {
		if c.ID == built.Image {
			b.Logf("environment layer: %s (setup and commit took %s)", sandbox.FormatBytes(c.Size), built.Setup.Duration.Round(time.Second))
		}
	}
	if err := built.Release(); err != nil {
		b.Fatal(err)
	}

	ready := func(b *testing.B, prepare bool) {
		// The whole wait, and each of its parts.
		var total, prep, create, copyIn, exe []time.Duration
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			image := sandbox.DefaultImage
			var e *env.Environment
			if prepare {
				if e, err = m.Prepare(ctx, req); err != nil || !e.Cached {
					b.Fatalf("the environment is not cached: %v", err)
				}
				image = e.Image
			}
			t1 := time.Now()
			c := cfg
			c.Image, c.BaseImage = image, sandbox.DefaultImage
			sb, err := sandbox.New(ctx, docker, c, fmt.Sprintf("bench-env-%d", i), "agent")
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if err := sb.CopyRepo(ctx, repo); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			if err := sb.StartExecutor(ctx); err != nil {
				b.Fatal(err)
			}
			t4 := time.Now()
			total, prep, create, copyIn, exe = append(total, t4.Sub(start)), append(prep, t1.Sub(start)),
				append(create, t2.Sub(t1)), append(copyIn, t3.Sub(t2)), append(exe, t4.Sub(t3))
			b.StopTimer()
			if err := sb.Close(); err != nil {
				b.Fatal(err)
			}
			if err := e.Release(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		p50 := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2]) / float64(time.Millisecond)
		}
		b.ReportMetric(p50(total), "p50-ms")
		slices.Sort(total)
		b.ReportMetric(float64(total[(len(total)-1)*99/100])/float64(time.Millisecond), "p99-ms")
		b.ReportMetric(p50(prep), "prepare-p50-ms")
		b.ReportMetric(p50(create), "create-p50-ms")
		b.ReportMetric(p50(copyIn), "copy-p50-ms")
		b.ReportMetric(p50(exe), "executor-p50-ms")
	}
	b.Run("Cached300MB", func(b *testing.B) { ready(b, true) })
	b.Run("NoEnvironment", func(b *testing.B) { ready(b, false) })
}

// bigRepo makes a committed repository of about size bytes (half working tree, half .git
// objects: random content does not compress) holding the setup script.
func bigRepo(b *testing.B, size int, script string) string {
	b.Helper()
	dir := b.TempDir()
	const fileSize = 128 << 10
	buf := make([]byte, fileSize)
	for i := range size / 2 / fileSize {
		_, _ = rand.Read(buf)
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%16), fmt.Sprintf("f%03d.bin", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".frognano"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, env.ScriptFile), []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-q", "-m", "big")
	return dir
}

// buildExecutor builds the static executor for sandboxes that start it.
func buildExecutor(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "frognano-executor")
	build := exec.Command("go", "build", "-trimpath", "-o", path, "github.com/frognano/frognano/cmd/frognano-executor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the executor: %v\n%s", err, out)
	}
	return path
}
