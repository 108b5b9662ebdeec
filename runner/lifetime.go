package runner

import (
	"time"

	"github.com/frognano/frognano/runner/leaf"
)

// sandboxLifetimeMargin is added to the longest phase one sandbox serves (the agent loop, or
// one test run) to make its lifetime: it covers copying the repository, taking the diff,
// applying the patch and reading the test report.
const sandboxLifetimeMargin = 15 * time.Minute

// SandboxLifetime is the lifetime each sandbox of a run gets (sandbox.Config.Lifetime), so that
// one whose process was killed ends by itself: the longer of the agent loop's limit (0: leaf's
// default; negative: none, so sandbox.DefaultLifetime) and a test run's, plus the margin.
func SandboxLifetime(agentTime, testTime time.Duration) time.Duration {
	if agentTime < 0 {
		return 0
	}
	if agentTime == 0 {
		agentTime = leaf.DefaultMaxTime
	}
	return max(agentTime, testTime) + sandboxLifetimeMargin
}
