package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/sandbox"
)

// UsageLine is a run's usage (runner.Result.Usage) in one line for people: the check run's
// summary, the report.
func UsageLine(u runner.Usage) string {
	s := fmt.Sprintf("Usage: %d prompt tokens (%d cached), %d completion tokens; model %s, tools %s, tests %s; sandboxes %s CPU, peak memory %s",
		u.PromptTokens, u.CachedTokens, u.CompletionTokens, u.ModelTime.Round(time.Second), u.ToolTime.Round(time.Second),
		u.TestTime.Round(time.Second), u.SandboxCPU.Round(100*time.Millisecond), sandbox.FormatBytes(u.SandboxPeak))
	if u.Attempts > 1 {
		s += fmt.Sprintf("; %d attempts", u.Attempts)
	}
	return s + "."
}

// writeUsage ends the check run's summary with the run's usage: numbers only, frognano's text.
func writeUsage(b *strings.Builder, u runner.Usage) {
	if !strings.HasSuffix(b.String(), "\n\n") && b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(UsageLine(u) + "\n")
}
