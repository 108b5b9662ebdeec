package leaf

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// BenchmarkRunScripted measures the harness overhead of a 20-step run (19 tool
// turns, then a final answer) against the scripted server over loopback HTTP, with
// in-memory tools: request encoding, HTTP, decoding, accounting.
func BenchmarkRunScripted(b *testing.B) {
	var turns []leaftest.Turn
	for i := range 19 {
		turns = append(turns, leaftest.Turn{
			ReasoningContent: "I should look at the next file.",
			ToolCalls:        []leaftest.ToolCall{{Name: "Read", Arguments: leaftest.Arguments(fmt.Sprintf(`{"file_path":"pkg/file%d.go"}`, i))}},
			Usage:            &leaftest.Usage{PromptTokens: 1000 + 300*i, CompletionTokens: 40, TotalTokens: 1040 + 300*i},
		})
	}
	turns = append(turns, leaftest.Turn{Content: "Done.", Usage: &leaftest.Usage{TotalTokens: 7000}})
	obs := ""
	for i := range 40 {
		obs += fmt.Sprintf("%d. \tvalue := compute(%d) // a typical line of Go source\n", i+1, i)
	}
	tools := &fakeTools{fn: func(context.Context, string, string) (string, error) { return obs, nil }}
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		srv := leaftest.NewServer(b, leaftest.Script{Turns: turns})
		cfg.BaseURL = srv.URL
		b.StartTimer()
		r := Run(context.Background(), cfg, "Fix the bug.", tools, nil)
		if r.ExitReason != ExitAgent || len(r.Steps) != 20 {
			b.Fatalf("exit %q after %d steps (%s)", r.ExitReason, len(r.Steps), r.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/20, "µs/step")
}
