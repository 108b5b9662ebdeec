package env_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkSandboxReadyCachedEnvironment measures what a run with a cached environment waits
// for before the model's first tool call, as runner.Run does it: the checkout is packed in the
// background (sandbox.Pack) while the environment image is found and pinned (no setup, no
// network) and the agent sandbox is made from it (sandbox.NewFrom: create, start, then the
// disk watcher and the copy at once); then the executor starts. The repository holds 50 MB,
// the environment's own layer 300 MB.
//
//   - Cached300MB: the first sandbox of a run, the whole wait (p50-ms) and its parts:
//     prepare-p50-ms (find and pin the environment), pack-p50-ms (packing, which overlaps the
//     rest), sandbox-p50-ms (NewFrom, waiting for the pack when it is not done), executor-p50-ms.
//   - Cached300MBNextSandbox: every further sandbox of the run (tests before, tests after,
//     other attempts) from the same pack: NewFrom and the executor.
//   - NoEnvironment: the first sandbox on the base image, as every run was before environments.
func BenchmarkSandboxReadyCachedEnvironment(b *testing.B) {
	ctx := context.Background()
	repo := gittest.BigRepo(b, 50<<20, map[string]string{env.ScriptFile: "head -c 314572800 /dev/urandom > /opt/env-layer.bin\n"})
	head := gittest.Git(b, repo, "rev-parse", "HEAD")
	cfg := sandboxConfig(b)
	m := manager(b, env.Config{Network: env.NoNetwork, Timeout: 10 * time.Minute}, "")
	req := env.Request{RunID: "bench-env", RepoDir: repo, Commit: head, Scope: scopeOf(b, repo), Sandbox: cfg}
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

	// ready makes one sandbox as a run does; next makes it from an earlier run's pack.
	ready := func(b *testing.B, prepare bool, next *sandbox.Snapshot) {
		var total, prep, pack, create, exe []time.Duration
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			snap := next
			var packed chan time.Duration
			if snap == nil {
				if snap, err = sandbox.Pack(ctx, repo, cfg.User, ""); err != nil {
					b.Fatal(err)
				}
				packed = make(chan time.Duration, 1)
				go func() {
					_ = snap.Wait(ctx)
					packed <- time.Since(start)
				}()
			}
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
			sb, err := sandbox.NewFrom(ctx, docker, c, snap, fmt.Sprintf("bench-env-%d", i), "agent")
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if err := sb.StartExecutor(ctx); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			total, prep, create, exe = append(total, t3.Sub(start)), append(prep, t1.Sub(start)),
				append(create, t2.Sub(t1)), append(exe, t3.Sub(t2))
			b.StopTimer()
			if packed != nil {
				pack = append(pack, <-packed) // done: NewFrom waited for it
			}
			if err := sb.Close(); err != nil {
				b.Fatal(err)
			}
			if err := e.Release(); err != nil {
				b.Fatal(err)
			}
			if snap != next {
				if err := snap.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		b.StopTimer()
		p50 := func(d []time.Duration) float64 {
			if len(d) == 0 {
				return 0
			}
			slices.Sort(d)
			return float64(d[len(d)/2]) / float64(time.Millisecond)
		}
		b.ReportMetric(p50(total), "p50-ms")
		slices.Sort(total)
		b.ReportMetric(float64(total[(len(total)-1)*99/100])/float64(time.Millisecond), "p99-ms")
		b.ReportMetric(p50(prep), "prepare-p50-ms")
		b.ReportMetric(p50(create), "sandbox-p50-ms")
		b.ReportMetric(p50(exe), "executor-p50-ms")
		if next == nil {
			b.ReportMetric(p50(pack), "pack-p50-ms")
		}
	}
	b.Run("Cached300MB", func(b *testing.B) { ready(b, true, nil) })
	b.Run("Cached300MBNextSandbox", func(b *testing.B) {
		snap, err := sandbox.Pack(ctx, repo, cfg.User, "")
		if err != nil {
			b.Fatal(err)
		}
		defer snap.Close()
		ready(b, true, snap)
	})
	b.Run("NoEnvironment", func(b *testing.B) { ready(b, false, nil) })
}
