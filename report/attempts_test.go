package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// hostileAttempt is an attempt whose model wrote markup, mentions and pipes everywhere, and
// many long steps.
func hostileAttempt(k, size int) *runner.Result {
	r := &runner.Result{
		TestCommand: "python3 -m pytest -q",
		Patch:       &patch.Checked{Diff: []byte(strings.Repeat("x", size))},
		TestsBefore: &runner.TestRun{Outcome: verify.Outcome{ExitCode: 1}},
		TestsAfter:  &runner.TestRun{Outcome: verify.Outcome{ExitCode: 1}, PatchApplied: true},
		Comparison:  &verify.Comparison{PerTest: true, StillFailing: []string{"t", "t"}},
	}
	msg := fmt.Sprintf("attempt %d | @admin #1 <img src=x onerror=alert(1)> ``` **bold** [x](https://evil.example) :+1:\n| a | b |", k)
	var steps []leaf.Step
	for i := range 40 {
		args := fmt.Sprintf(`{"command": "echo %s"}`, strings.Repeat("<b>@someone</b> ", 200))
		steps = append(steps, leaf.Step{Index: i,
			Assistant:    leaf.Message{Role: "assistant", Content: &msg, ToolCalls: []leaf.ToolCall{{ID: "c", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: args}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: strings.Repeat("</details><script>x</script>\n", 500)}},
		})
	}
	r.Leaf = &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: msg, Steps: steps}
	return r
}

// TestAttemptsTableIsInertAndFits: eight hostile attempts render a table of eight rows in
// the report, the PR body and the summary, every one inert on GitHub and within the limit.
func TestAttemptsTableIsInertAndFits(t *testing.T) {
	t.Parallel()
	set := &runner.AttemptSet{}
	var results []*runner.Result
	for k := 1; k <= 8; k++ {
		r := hostileAttempt(k, 100*k)
		results = append(results, r)
		set.Attempts = append(set.Attempts, runner.Attempt{K: k, Result: r})
	}
	// As runner's ranking orders them (runner: TestRankAttempts): the tests tie, the smallest
	// patch wins.
	for i := range results {
		set.Order = append(set.Order, i)
	}
	set.Why = "attempt 1 ties with attempt 2 on the tests and has the smaller patch (100 bytes against 200)"
	set.Chosen = set.Order[0]
	chosen := results[set.Chosen]
	chosen.Attempts = set
	for name, md := range map[string]string{
		"report":  Markdown(chosen),
		"prbody":  PRBody(chosen, Fit{Suffix: "\n\nFixes #1"}),
		"summary": Summary(chosen, Fit{Limit: GitHubBodyLimit - 2000}),
	} {
		t.Run(name, func(t *testing.T) {
			if n := runeLen(md); n > GitHubBodyLimit {
				t.Fatalf("%d characters, over GitHub's limit", n)
			}
			rows := 0
			for _, l := range strings.Split(md, "\n") {
				for k := 1; k <= 8; k++ {
					if strings.HasPrefix(l, fmt.Sprintf("| %d | `agent` |", k)) {
						rows++
					}
				}
			}
			if rows != 8 {
				t.Errorf("%d attempt rows, want 8", rows)
			}
			if !strings.Contains(md, "Chosen: attempt 1, because") {
				t.Errorf("no reason line")
			}
			checkInert(t, md, strings.Count(md, "<details>\n<summary>"))
		})
	}
}
