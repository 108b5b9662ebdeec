package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/buildtest"
	"github.com/frognano/frognano/runner/executor"
)

// observerExecutor builds the executor binary once for the internal benchmarks (the external
// tests' TestMain, dockertest.Main, has already checked that the engine answers).
var observerExecutor = buildtest.Once("github.com/frognano/frognano/cmd/frognano-executor", "frognano-executor")

// BenchmarkObserverMark is the round trip the host makes to the network observer after each
// Bash call: one request line and one answer over the exec's attached stream.
func BenchmarkObserverMark(b *testing.B) {
	docker, err := NewClient()
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.ExecutorPath = observerExecutor(b)
	cfg.Memory, cfg.CPUs, cfg.Owner = 512<<20, 1, "sandbox-test"
	ctx := context.Background()
	sb, err := New(ctx, docker, cfg, "bench-observer-mark", "agent")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	if err := sb.StartNetworkObserver(ctx); err != nil {
		b.Fatal(err)
	}
	o := sb.obs.Load()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		var m executor.ObserverMark
		start := time.Now()
		if err := o.ask(ctx, "mark", markTimeout, &m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-ms")
}
