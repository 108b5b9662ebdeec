package leaf

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// BenchmarkAttemptsBatching is the model side of several attempts: n concurrent 10-turn
// sessions, with in-memory tools, through one Limiter against leaftest's simulated batching
// server (25 tokens a reply at 2 ms a decode step alone, 5% slower per extra sequence). It
// reports the wall time of the n sessions against one alone (issue 12's goal: 4 within 1.3x)
// and the harness's own time per attempt beyond the simulated decoding.
func BenchmarkAttemptsBatching(b *testing.B) {
	tools := &fakeTools{fn: func(context.Context, string, string) (string, error) { return "ok", nil }}
	batch := &leaftest.Batching{Step: 2 * time.Millisecond, Slowdown: 0.05, Tokens: 25}
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("attempts=%d", n), func(b *testing.B) {
			var wall time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var servers []*leaftest.Server
				for k := range n {
					var turns []leaftest.Turn
					for j := range 9 {
						turns = append(turns, leaftest.Turn{ToolCalls: []leaftest.ToolCall{{ID: fmt.Sprintf("c%d_%d", k, j), Name: "Read", Arguments: `{"file_path":"a.py"}`}}})
					}
					turns = append(turns, leaftest.Turn{Content: "Done."})
					servers = append(servers, leaftest.NewServer(b, leaftest.Script{Turns: turns}))
				}
				rt := leaftest.NewRouter(b, batch, servers...)
				cfg := DefaultConfig()
				cfg.Logger = slog.New(slog.DiscardHandler)
				cfg.BaseURL = rt.URL
				cfg.HTTPClient = NewLimiter(8).Client(nil)
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if r := Run(context.Background(), cfg, "Fix the bug.", tools, nil); r.ExitReason != ExitAgent {
							b.Errorf("exit %q (%s)", r.ExitReason, r.Error)
						}
					}()
				}
				wg.Wait()
				wall += time.Since(start)
			}
			alone := 10 * time.Duration(batch.Tokens) * batch.Step // the decoding of one session alone
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/run")
			b.ReportMetric(float64((wall/time.Duration(b.N)-alone).Milliseconds())/float64(n), "harness-ms/attempt")
		})
	}
}
