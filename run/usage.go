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

// UsageLines is r's usage as label and value pairs, for `frognano runs show` and the run page,
// each figure once: tokens; time (in all, then the model's, the tools' and the tests' parts);
// the sandboxes' CPU and peak memory; attempts (the agent's, in how many tries of the job);
// the model. A figure the run does not have is left out, and a run whose agent has not
// finished says "not yet" for its tokens and time, in words; never a dash in a sentence.
func UsageLines(r Record) [][2]string {
	u := r.Usage
	ms := func(v int64) string {
		return (time.Duration(v) * time.Millisecond).Round(100 * time.Millisecond).String()
	}
	var lines [][2]string
	switch {
	case r.PromptTokens > 0 || r.CompletionTokens > 0:
		cached := ""
		if u.CachedTokens > 0 {
			cached = fmt.Sprintf(" (%d cached)", u.CachedTokens)
		}
		lines = append(lines, [2]string{"tokens", fmt.Sprintf("%d prompt%s, %d completion", r.PromptTokens, cached, r.CompletionTokens)})
	case Unfinished(r.State):
		lines = append(lines, [2]string{"tokens and time", "not yet: counted when the agent has finished"})
	}
	var parts []string
	for _, p := range []struct {
		name string
		v    int64
	}{{"model", u.ModelMS}, {"tools", u.ToolMS}, {"tests", u.TestMS}} {
		if p.v > 0 {
			parts = append(parts, p.name+" "+ms(p.v))
		}
	}
	switch {
	case r.ElapsedMS > 0 && len(parts) > 0:
		lines = append(lines, [2]string{"time", ms(r.ElapsedMS) + " in all: " + strings.Join(parts, ", ")})
	case r.ElapsedMS > 0:
		lines = append(lines, [2]string{"time", ms(r.ElapsedMS) + " in all"})
	case len(parts) > 0:
		lines = append(lines, [2]string{"time", strings.Join(parts, ", ")})
	}
	if u.SandboxCPUMS > 0 || u.SandboxPeakBytes > 0 {
		lines = append(lines, [2]string{"sandboxes", fmt.Sprintf("%s CPU, peak memory %s", ms(u.SandboxCPUMS), formatBytes(u.SandboxPeakBytes))})
	}
	tries := plural(r.Attempts, "try", "tries")
	switch {
	case u.AgentAttempts > 0 && r.Attempts > 0:
		lines = append(lines, [2]string{"attempts", plural(u.AgentAttempts, "agent attempt", "agent attempts") + " in " + tries})
	case u.AgentAttempts > 0:
		lines = append(lines, [2]string{"attempts", plural(u.AgentAttempts, "agent attempt", "agent attempts")})
	case r.Attempts > 0:
		lines = append(lines, [2]string{"attempts", tries})
	case Unfinished(r.State):
		lines = append(lines, [2]string{"attempts", "not tried yet"})
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
