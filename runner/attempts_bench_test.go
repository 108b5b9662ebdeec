package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// BenchmarkAttempts is the wall time of a run of 1 and of 4 attempts on pyaverage against a
// simulated batching model server (leaftest.Batching: 40 tokens per reply at 5 ms a decode
// step alone, each step 5% slower per extra sequence in flight), every attempt playing the
// fixing session. With "same", the four attempts make the same patch (as a model often does
// on an easy bug), so they share one tests-after run; with "distinct", each attempt's fix
// differs by a comment, so each patch has its own tests-after run: the worst case. With
// "tokens=400" each reply is 400 tokens (2 s alone at 200 tokens a second: about what a 4B
// reasoning model writes a turn on one GPU) instead of 40, so the model's share of a run is
// closer to a real one's and the sandboxes' (CPU-bound on a small host) smaller.
// It reports the wall time per run, the model time of the chosen attempt, the harness's
// overhead per attempt ((wall - model) / attempts), the most requests the server had in
// flight, and where the time goes (see below). The goal of issue 12: 4 attempts within
// 1.3x the wall time of one.
func BenchmarkAttempts(b *testing.B) {
	base := leaftest.LoadModel(b, "e2e-pyaverage.json")
	for _, c := range []struct {
		n        int
		distinct bool
		tokens   int
	}{{1, false, 40}, {4, false, 40}, {4, true, 40}, {1, false, 400}, {4, true, 400}} {
		n := c.n
		name := fmt.Sprintf("attempts=%d", n)
		if n > 1 {
			name += map[bool]string{false: "/same", true: "/distinct"}[c.distinct]
		}
		if c.tokens != 40 {
			name = fmt.Sprintf("tokens=%d/%s", c.tokens, name)
		}
		b.Run(name, func(b *testing.B) {
			var wall, model, ready, before, after, loop time.Duration
			peak, sandboxes, afters := 0, 0, 0
			var mu sync.Mutex
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var servers []*leaftest.Server
				for k := 1; k <= n; k++ {
					s := distinctCalls(base, k)
					if c.distinct {
						s = distinctFix(s, k)
					}
					servers = append(servers, leaftest.NewServer(b, s))
				}
				rt := leaftest.NewRouter(b, &leaftest.Batching{Step: 5 * time.Millisecond, Slowdown: 0.05, Tokens: c.tokens}, servers...)
				cfg := runner.DefaultConfig()
				cfg.Sandbox.ExecutorPath = executorPath
				cfg.Sandbox.Image = sandbox.DefaultImage
				cfg.Sandbox.Owner = "runner-bench"
				cfg.Leaf.BaseURL = rt.URL
				cfg.Sandbox.Ready = func(d time.Duration) {
					mu.Lock()
					ready += d
					sandboxes++
					mu.Unlock()
				}
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
				before += res.TestsBefore.Duration
				for _, a := range attemptResults(res) {
					loop += a.Leaf.ModelTime + a.Leaf.ToolTime
					if a.TestsAfter != nil {
						after += a.TestsAfter.Duration
						afters++
					}
				}
			}
			f := float64(b.N)
			b.ReportMetric(wall.Seconds()/f, "wall-s/run")
			b.ReportMetric(float64(model.Milliseconds())/f, "model-ms/attempt")
			b.ReportMetric((wall-model).Seconds()/f/float64(n), "overhead-s/attempt")
			b.ReportMetric(float64(peak), "peak-in-flight")
			// Where the time goes: the mean time a sandbox took to be ready (create, start, disk
			// watcher, copy), the before-run's and each after-run's test command, and each
			// attempt's agent loop (model and tools).
			b.ReportMetric(ready.Seconds()/float64(max(sandboxes, 1)), "ready-s/sandbox")
			b.ReportMetric(before.Seconds()/f, "before-s/run")
			b.ReportMetric(after.Seconds()/float64(max(afters, 1)), "after-s/attempt")
			b.ReportMetric(loop.Seconds()/f/float64(n), "loop-s/attempt")
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

// attemptResults is every attempt's Result of res (res alone for a single attempt).
func attemptResults(res *runner.Result) []*runner.Result {
	if res.Attempts == nil {
		return []*runner.Result{res}
	}
	var out []*runner.Result
	for _, a := range res.Attempts.Attempts {
		if a.Result != nil {
			out = append(out, a.Result)
		}
	}
	return out
}

// distinctFix is script s whose Edit writes attempt k's own comment after the fix, so that
// every attempt's patch differs (and still fixes the bug).
func distinctFix(s leaftest.Script, k int) leaftest.Script {
	const fix = `return total(xs) / len(xs)"`
	for i := range s.Turns {
		for j, c := range s.Turns[i].ToolCalls {
			if c.Name == "Edit" && strings.Contains(string(c.Arguments), fix) {
				s.Turns[i].ToolCalls[j].Arguments = leaftest.Arguments(strings.Replace(string(c.Arguments), fix, fmt.Sprintf(`return total(xs) / len(xs)  # attempt %d"`, k), 1))
			}
		}
	}
	return s
}
