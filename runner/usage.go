package runner

import (
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

// Usage is what one run used, over all its attempts: what an operator is billed for in GPU
// and machine time (issue 22). Tokens are the model server's own counts.
type Usage struct {
	PromptTokens, CompletionTokens int
	// CachedTokens is the part of PromptTokens the server served from its prompt cache.
	CachedTokens int
	// ModelTime is the time spent waiting for the model, ToolTime running tool calls, TestTime
	// running the repository's tests (each test run once, however many attempts share it).
	ModelTime, ToolTime, TestTime time.Duration
	// SandboxCPU is the CPU time of every sandbox of the run (agent, tests, setup), summed;
	// SandboxPeak the highest memory use of one of them, in bytes (sandbox.Usage).
	SandboxCPU  time.Duration
	SandboxPeak int64
	// Attempts is how many agent attempts the run made (1 unless FROGNANO_ATTEMPTS).
	Attempts int
}

// Usage sums what the run used over its attempts (Attempts), each test run and each attempt's
// sandboxes counted once, and, for a run that escalated, what the first model's run used.
func (r *Result) Usage() Usage {
	if r == nil {
		return Usage{}
	}
	if r.Escalation != nil {
		first, rest := r.Escalation.Usage(), *r
		rest.Escalation = nil
		u := rest.Usage()
		u.PromptTokens += first.PromptTokens
		u.CompletionTokens += first.CompletionTokens
		u.CachedTokens += first.CachedTokens
		u.ModelTime += first.ModelTime
		u.ToolTime += first.ToolTime
		u.TestTime += first.TestTime
		u.SandboxCPU += first.SandboxCPU
		u.SandboxPeak = max(u.SandboxPeak, first.SandboxPeak)
		u.Attempts += first.Attempts
		return u
	}
	results := []*Result{r}
	if r.Attempts != nil {
		results = results[:0]
		for _, a := range r.Attempts.Attempts {
			if a.Result != nil {
				results = append(results, a.Result)
			}
		}
	}
	u := Usage{Attempts: max(1, len(results))}
	if r.Attempts != nil {
		u.Attempts = len(r.Attempts.Attempts)
	}
	tests := map[*TestRun]bool{}
	meters := map[*sandbox.Usage]bool{}
	for _, a := range results {
		if lr := a.Leaf; lr != nil {
			u.PromptTokens += lr.PromptTokens
			u.CompletionTokens += lr.CompletionTokens
			u.CachedTokens += lr.CachedTokens
			u.ModelTime += lr.ModelTime
			u.ToolTime += lr.ToolTime
		}
		for _, t := range []*TestRun{a.TestsBefore, a.TestsAfter} {
			if t != nil && !tests[t] {
				tests[t] = true
				u.TestTime += t.Duration
			}
		}
		if m := a.SandboxUsage; m != nil && !meters[m] {
			meters[m] = true
			u.SandboxCPU += m.CPU()
			u.SandboxPeak = max(u.SandboxPeak, m.Peak())
		}
	}
	return u
}
