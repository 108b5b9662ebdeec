package sandbox_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// BenchmarkSandboxReady measures what a run waits for before the first tool call: create and
// start the container, copy a 50 MB repository in, start the executor.
func BenchmarkSandboxReady(b *testing.B) {
	repo := makeBigRepo(b, 50<<20)
	cfg := testConfig()
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		sb, err := sandbox.New(ctx, docker, cfg, fmt.Sprintf("bench-ready-%d", i), "agent")
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.CopyRepo(ctx, repo); err != nil {
			sb.Close()
			b.Fatal(err)
		}
		if err := sb.StartExecutor(ctx); err != nil {
			sb.Close()
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		b.StopTimer()
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	lat.report(b)
}

// makeBigRepo makes a committed repository of about size bytes (half working tree, half
// .git objects: random content does not compress).
func makeBigRepo(b *testing.B, size int) string {
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
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-q", "-m", "big"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
