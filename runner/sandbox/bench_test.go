package sandbox_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/sandbox"
)

// latencies records one duration per operation and reports p50 and p99 in milliseconds.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 {
		return float64(l[int(p*float64(len(l)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func benchCall(b *testing.B, sb *sandbox.Sandbox, tool, args string, check func(string) bool) {
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		obs, err := sb.Call(ctx, tool, args)
		lat = append(lat, time.Since(start))
		if err != nil || !check(obs) {
			b.Fatalf("Call(%s): %v %q", tool, err, obs)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkToolRoundTripRead200 reads a 200-line file through the persistent executor.
func BenchmarkToolRoundTripRead200(b *testing.B) {
	sb := readySandbox(b, testConfig(), "")
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of the file, with some text to make it look like code();", i)
	}
	res, err := sb.Exec(context.Background(), []string{"/bin/sh", "-c", "cat > big.txt"}, strings.NewReader(strings.Join(lines, "\n")+"\n"), time.Minute, 0)
	if err != nil || res.ExitCode != 0 {
		b.Fatalf("writing the file: %v %+v", err, res)
	}
	benchCall(b, sb, "Read", `{"file_path":"big.txt"}`, func(obs string) bool { return strings.Contains(obs, "200. line 199") })
}

// BenchmarkToolRoundTripBashTrue runs `true` through the persistent executor's Bash tool.
func BenchmarkToolRoundTripBashTrue(b *testing.B) {
	sb := readySandbox(b, testConfig(), "")
	benchCall(b, sb, "Bash", `{"command":"true"}`, func(obs string) bool { return strings.HasPrefix(obs, "Exit code: 0\n") })
}

// BenchmarkDockerExecPerCall is the alternative design: one Engine-API exec per call.
func BenchmarkDockerExecPerCall(b *testing.B) {
	sb := readySandbox(b, testConfig(), "")
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := sb.Exec(ctx, []string{"true"}, nil, time.Minute, 0)
		lat = append(lat, time.Since(start))
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Exec: %v %+v", err, res)
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkSandboxReady measures what a run waits for before the first tool call with a 50 MB
// repository, whole and by phase (p50-ms and p99-ms of each):
//
//   - FirstOfRun: Pack, NewFrom (create and start, then the disk watcher and the copy at once,
//     the copy waiting for the pack), StartExecutor: the agent sandbox of a run (runner.Run).
//   - NextOfRun: NewFrom from the run's pack and StartExecutor: tests before, tests after and
//     every further attempt.
//   - CopyRepo: New, CopyRepo, StartExecutor, one after the other: a sandbox that packs the
//     checkout for itself (the setup container; every sandbox before Pack existed).
//   - Pack: packing alone (list, fresh .git, tar to the file).
//   - New: create, start and the disk watcher, no copy.
//   - CopySnapshot: the copy of a packed checkout into a running sandbox.
//   - StartExecutor: copying the executor in and starting it.
func BenchmarkSandboxReady(b *testing.B) {
	repo := gittest.BigRepo(b, 50<<20, nil)
	cfg := testConfig()
	ctx := context.Background()
	packed, err := sandbox.Pack(ctx, repo, cfg.User, "")
	if err != nil {
		b.Fatal(err)
	}
	defer packed.Close()
	if err := packed.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("the packed repository holds %s", sandbox.FormatBytes(packed.Size()))
	n := 0
	newSandbox := func(b *testing.B, snap *sandbox.Snapshot) *sandbox.Sandbox {
		n++
		var sb *sandbox.Sandbox
		var err error
		if snap != nil {
			sb, err = sandbox.NewFrom(ctx, docker, cfg, snap, fmt.Sprintf("bench-ready-%d", n), "agent")
		} else {
			sb, err = sandbox.New(ctx, docker, cfg, fmt.Sprintf("bench-ready-%d", n), "agent")
		}
		if err != nil {
			b.Fatal(err)
		}
		return sb
	}
	closeSandbox := func(b *testing.B, sb *sandbox.Sandbox) {
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
	}
	// phase times op (b.N times) between untimed before and after steps.
	phase := func(before func(b *testing.B) *sandbox.Sandbox, op func(b *testing.B, sb *sandbox.Sandbox) *sandbox.Sandbox) func(b *testing.B) {
		return func(b *testing.B) {
			lat := make(latencies, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				var sb *sandbox.Sandbox
				if before != nil {
					sb = before(b)
				}
				b.StartTimer()
				start := time.Now()
				sb = op(b, sb)
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if sb != nil {
					closeSandbox(b, sb)
				}
				b.StartTimer()
			}
			b.StopTimer()
			lat.report(b)
		}
	}
	startExecutor := func(b *testing.B, sb *sandbox.Sandbox) {
		if err := sb.StartExecutor(ctx); err != nil {
			sb.Close()
			b.Fatal(err)
		}
	}
	b.Run("FirstOfRun", phase(nil, func(b *testing.B, _ *sandbox.Sandbox) *sandbox.Sandbox {
		snap, err := sandbox.Pack(ctx, repo, cfg.User, "")
		if err != nil {
			b.Fatal(err)
		}
		defer snap.Close()
		sb := newSandbox(b, snap)
		startExecutor(b, sb)
		return sb
	}))
	b.Run("NextOfRun", phase(nil, func(b *testing.B, _ *sandbox.Sandbox) *sandbox.Sandbox {
		sb := newSandbox(b, packed)
		startExecutor(b, sb)
		return sb
	}))
	b.Run("CopyRepo", phase(nil, func(b *testing.B, _ *sandbox.Sandbox) *sandbox.Sandbox {
		sb := newSandbox(b, nil)
		if err := sb.CopyRepo(ctx, repo); err != nil {
			sb.Close()
			b.Fatal(err)
		}
		startExecutor(b, sb)
		return sb
	}))
	b.Run("Pack", phase(nil, func(b *testing.B, _ *sandbox.Sandbox) *sandbox.Sandbox {
		snap, err := sandbox.Pack(ctx, repo, cfg.User, "")
		if err != nil {
			b.Fatal(err)
		}
		defer snap.Close()
		if err := snap.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		return nil
	}))
	b.Run("New", phase(nil, func(b *testing.B, _ *sandbox.Sandbox) *sandbox.Sandbox { return newSandbox(b, nil) }))
	fresh := func(b *testing.B) *sandbox.Sandbox { return newSandbox(b, nil) }
	b.Run("CopySnapshot", phase(fresh, func(b *testing.B, sb *sandbox.Sandbox) *sandbox.Sandbox {
		if err := sb.CopySnapshot(ctx, packed); err != nil {
			sb.Close()
			b.Fatal(err)
		}
		return sb
	}))
	b.Run("StartExecutor", phase(func(b *testing.B) *sandbox.Sandbox { return newSandbox(b, packed) },
		func(b *testing.B, sb *sandbox.Sandbox) *sandbox.Sandbox {
			startExecutor(b, sb)
			return sb
		}))
}
