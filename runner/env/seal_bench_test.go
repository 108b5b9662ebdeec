package env_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/env/envtest"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkSealCheck measures the seal check (sandbox.Seal) on a typical environment: setup
// pip-installs a package of 6,000 modules (about 400 MB once installed, with pip's compiled
// files) from a package server of the test's own,
// and the check then stops the container, lists its changes through the engine, starts it again
// and searches every file for three operator values. ns/op is the whole check; its parts are
// list-s (the stop, the layer's measurement and the engine's list), restart-s (the executor's
// copy and the container's start), search-s (the search itself), and what it read (files, MB,
// MB/s of the search).
func BenchmarkSealCheck(b *testing.B) {
	ctx := context.Background()
	files := map[string]string{}
	for i := range 6000 {
		var body strings.Builder
		for j := 0; body.Len() < 25<<10; j++ {
			fmt.Fprintf(&body, "def handler_%d_%d(request, *args, **kwargs):\n    return render(request, 'page_%d.html', {'n': %d})\n\n", i, j, j, i*j)
		}
		files[fmt.Sprintf("bigpkg/sub%03d/mod%05d.py", i/100, i)] = body.String()
	}
	name, whl := envtest.Wheel("bigpkg", "1.0.0", files)
	srv := envtest.NewServer(b, docker, "pkgs", envtest.SimpleIndex("bigpkg", map[string][]byte{name: whl}))
	values := []string{madeUpValue(b), madeUpValue(b), "http://mirror-user:" + madeUpValue(b) + "@proxy.invalid:3128"}
	cfg := sandboxConfig(b)
	cfg.Memory = 2 << 30
	cfg.Lifetime = 30 * time.Minute
	var list, restart, search time.Duration
	var read, nfiles int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		sb, err := sandbox.NewSetup(ctx, docker, cfg, srv.Network, 10<<30, "bench-seal")
		if err != nil {
			b.Fatal(err)
		}
		res, err := sb.Run(ctx, sandbox.ExecSpec{Argv: []string{"/bin/bash", "-lc", "python3 -m pip install --no-cache-dir --index-url " +
			srv.URL() + "/simple/ --trusted-host " + srv.Host + " bigpkg 2>&1 | tail -n 2 && du -sh /usr/local/lib/python3*/dist-packages/bigpkg"},
			User: sandbox.SetupUser, Timeout: 20 * time.Minute})
		if err != nil || res.ExitCode != 0 {
			sb.Close()
			b.Fatalf("pip install: %v exit %d\n%s%s", err, res.ExitCode, res.Stdout, res.Stderr)
		}
		b.Logf("setup: %s", strings.TrimSpace(string(res.Stdout)))
		b.StartTimer()
		rep, err := sb.Seal(ctx, values, 20*time.Minute)
		b.StopTimer()
		sb.Close()
		if err != nil {
			b.Fatal(err)
		}
		if !rep.End.Done || len(rep.Lines) != 0 {
			b.Fatalf("the check of a clean environment: %+v, %d lines", rep.End, len(rep.Lines))
		}
		list += rep.Listed
		restart += rep.Took - rep.Listed - rep.Search
		search += rep.Search
		read += rep.End.Bytes
		nfiles += rep.End.Files
		b.StartTimer()
	}
	b.ReportMetric(list.Seconds()/float64(b.N), "list-s")
	b.ReportMetric(restart.Seconds()/float64(b.N), "restart-s")
	b.ReportMetric(search.Seconds()/float64(b.N), "search-s")
	b.ReportMetric(float64(nfiles)/float64(b.N), "files")
	b.ReportMetric(float64(read)/float64(b.N)/1e6, "MB")
	b.ReportMetric(float64(read)/1e6/search.Seconds(), "MB/s")
}
