package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkScriptedRun is a whole run (three sandboxes, five agent steps, pytest before and
// after) against a scripted model that answers at once, so the wall time is the harness's
// own overhead. It reports that overhead and how it splits.
func BenchmarkScriptedRun(b *testing.B) {
	script := leaftest.LoadModel(b, "e2e-pyaverage.json")
	var wall, model, tools, tests time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv := leaftest.NewServer(b, script)
		cfg := runner.DefaultConfig()
		cfg.Sandbox.ExecutorPath = executorPath
		cfg.Sandbox.Image = sandbox.DefaultImage
		cfg.Sandbox.Owner = "runner-bench"
		cfg.Leaf.BaseURL = srv.URL
		r := runner.New(docker, cfg, nil)
		dir := checkoutTB(b, "pyaverage")
		b.StartTimer()
		start := time.Now()
		res, err := r.Run(context.Background(), runner.Spec{RepoDir: dir, Task: "Fix the failing test."}, nil)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		model += res.Leaf.ModelTime
		tools += res.Leaf.ToolTime
		tests += res.TestTime()
		if len(res.PatchBytes()) == 0 {
			b.Fatal("no patch")
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64((wall-model).Milliseconds())/n, "overhead-ms/run")
	b.ReportMetric(float64(model.Milliseconds())/n, "model-ms/run")
	b.ReportMetric(float64(tools.Milliseconds())/n, "tools-ms/run")
	b.ReportMetric(float64(tests.Milliseconds())/n, "tests-ms/run")
}
