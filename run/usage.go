package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/runner"
)

// RunUsage is what one run used besides its prompt and completion tokens (Record's): kept with
// the run when its agent finished (migration 0014), zero for a run whose agent never ran.
type RunUsage struct {
	CachedTokens            int64 // of the prompt tokens, served from the model server's cache
	ModelMS, ToolMS, TestMS int64
	SandboxCPUMS            int64 // CPU time of every sandbox of the run, summed
	SandboxPeakBytes        int64 // the highest memory use of one sandbox
	AgentAttempts           int   // agent attempts (FROGNANO_ATTEMPTS); 0: before it was kept
	// Model is the operator's name of the model that wrote the patch (runs.model, migration
	// 0018); "": before it was kept, or no agent ran.
	Model string
}

// usageOf copies u, a run's usage over every attempt, into o.
func usageOf(o *Outcome, u runner.Usage) {
	o.PromptTokens, o.CompletionTokens, o.CachedTokens = u.PromptTokens, u.CompletionTokens, u.CachedTokens
	o.ModelTime, o.ToolTime, o.TestTime = u.ModelTime, u.ToolTime, u.TestTime
	o.SandboxCPU, o.SandboxPeak, o.AgentAttempts = u.SandboxCPU, u.SandboxPeak, u.Attempts
}

// UsageLines is r's usage as label and value pairs, for `frognano runs show` and the run page.
func UsageLines(r Record) [][2]string {
	u := r.Usage
	ms := func(v int64) string {
		return (time.Duration(v) * time.Millisecond).Round(100 * time.Millisecond).String()
	}
	attempts := "-"
	if u.AgentAttempts > 0 {
		attempts = fmt.Sprint(u.AgentAttempts)
	}
	lines := [][2]string{
		{"tokens", fmt.Sprintf("%d prompt (%d cached), %d completion", r.PromptTokens, u.CachedTokens, r.CompletionTokens)},
		{"time", fmt.Sprintf("model %s, tools %s, tests %s", ms(u.ModelMS), ms(u.ToolMS), ms(u.TestMS))},
		{"sandboxes", fmt.Sprintf("%s CPU, peak memory %s", ms(u.SandboxCPUMS), formatBytes(u.SandboxPeakBytes))},
		{"attempts", fmt.Sprintf("%s agent attempt(s), %d job attempt(s)", attempts, r.Attempts)},
	}
	if u.Model != "" {
		lines = append(lines, [2]string{"model", u.Model})
	}
	return lines
}

// formatBytes is a size for people: 0 B, 512 KiB, 1.5 GiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(div)), ".0") + " " + string("KMGTPE"[exp]) + "iB"
}
