package runner_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkAttempts is the wall time of a run of 1 and of 4 attempts on pyaverage against a
// simulated batching model server (leaftest.Batching: 40 tokens per reply at 5 ms a decode
// step alone, each step 5% slower per extra sequence in flight), every attempt playing the
// fixing session. It reports the wall time per run, the model time of the chosen attempt,
// the harness's overhead per attempt ((wall - model) / attempts) and the most requests the
// server had in flight. The goal of issue 12: 4 attempts within 1.3x the wall time of one.
func BenchmarkAttempts(b *testing.B) {
	base := leaftest.LoadModel(b, "e2e-pyaverage.json")
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("attempts=%d", n), func(b *testing.B) {
			var wall, model time.Duration
			peak := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var servers []*leaftest.Server
				for k := 1; k <= n; k++ {
					servers = append(servers, leaftest.NewServer(b, distinctCalls(base, k)))
				}
				rt := leaftest.NewRouter(b, &leaftest.Batching{Step: 5 * time.Millisecond, Slowdown: 0.05, Tokens: 40}, servers...)
				cfg := runner.DefaultConfig()
				cfg.Sandbox.ExecutorPath = executorPath
				cfg.Sandbox.Image = sandbox.DefaultImage
				cfg.Sandbox.Owner = "runner-bench"
				cfg.Leaf.BaseURL = rt.URL
				r := runner.New(docker, cfg, nil)
				dir := checkoutTB(b, "pyaverage")
				b.StartTimer()
				start := time.Now()
				res, err := r.RunAttempts(context.Background(), runner.Spec{RepoDir: dir, Task: "Fix the failing test."}, runner.AttemptOptions{N: n})
				if err != nil {
					b.Fatal(err)
				}
				wall += time.Since(start)
				model += res.Leaf.ModelTime
				peak = max(peak, rt.Peak())
				if len(res.PatchBytes()) == 0 {
					b.Fatal("no patch")
				}
			}
			f := float64(b.N)
			b.ReportMetric(wall.Seconds()/f, "wall-s/run")
			b.ReportMetric(float64(model.Milliseconds())/f, "model-ms/attempt")
			b.ReportMetric((wall-model).Seconds()/f/float64(n), "overhead-s/attempt")
			b.ReportMetric(float64(peak), "peak-in-flight")
		})
	}
}

// distinctCalls is script s with attempt k's tool-call ids, so that a Router tells the
// attempts' conversations apart.
func distinctCalls(s leaftest.Script, k int) leaftest.Script {
	turns := make([]leaftest.Turn, len(s.Turns))
	copy(turns, s.Turns)
	for i := range turns {
		calls := append([]leaftest.ToolCall(nil), turns[i].ToolCalls...)
		for j := range calls {
			calls[j].ID = fmt.Sprintf("%s_%d", calls[j].ID, k)
		}
		turns[i].ToolCalls = calls
	}
	s.Turns = turns
	return s
}
