package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

func text(s string) *string { return &s }

// longResult is a finished run with many steps whose observations are large, as a real run
// that reads big files would be.
func longResult(steps int, obs string) *runner.Result {
	lr := &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "Done. cc @octocat, closes #12",
		PromptTokens: 1000, CompletionTokens: 100, ModelTime: time.Second, ToolTime: time.Second}
	for i := 0; i < steps; i++ {
		args := fmt.Sprintf(`{"file_path": "pkg/file%d.go"}`, i)
		lr.Steps = append(lr.Steps, leaf.Step{
			Index:        i,
			Assistant:    leaf.Message{Role: "assistant", Content: text("Reading."), ToolCalls: []leaf.ToolCall{{ID: "c", Type: "function", Function: leaf.FunctionCall{Name: "Read", Arguments: args}}}},
			Observations: []leaf.Observation{{Tool: "Read", Observation: obs}},
		})
	}
	return &runner.Result{
		RunID: "r1", Task: "Fix it", Model: "m", BaseCommit: "abc", TestCommand: "go test ./...", Leaf: lr,
		Patch:       &patch.Checked{Diff: []byte("diff"), Files: []patch.File{{OldPath: "a.go", NewPath: "a.go", Status: "modified", Added: 1, Deleted: 1}}},
		TestsBefore: &runner.TestRun{Outcome: verify.Outcome{Command: "go test ./...", ExitCode: 1, Tail: "FAIL"}},
		TestsAfter:  &runner.TestRun{Outcome: verify.Outcome{Command: "go test ./...", ExitCode: 0, Tail: "ok"}, PatchApplied: true},
	}
}

func TestPRBodyFitsGitHubLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		steps    int
		obs      string
		wantCut  bool // steps left out, with the note where
		wantObs  bool // observations shortened, each saying so
		wantStep int  // a step that must appear
	}{
		{"Short", 3, "package main\n", false, false, 3},
		{"ManyLargeObservations", 100, strings.Repeat("x", 30000), false, true, 100},
		{"MultibyteObservations", 60, strings.Repeat("é漢", 10000), false, true, 60},
		{"TooManySteps", 1000, strings.Repeat("z", 500), true, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := PRBody(longResult(tt.steps, tt.obs), Fit{Limit: GitHubBodyLimit - 100})
			if n := len([]rune(body)); n > GitHubBodyLimit-100 {
				t.Fatalf("body has %d characters, over the limit", n)
			}
			cut := strings.Contains(body, "The transcript was cut here")
			if cut != tt.wantCut {
				t.Errorf("cut note present = %v, want %v", cut, tt.wantCut)
			}
			if obsCut := strings.Contains(body, "more characters cut to fit"); obsCut != tt.wantObs {
				t.Errorf("observation cut note present = %v, want %v", obsCut, tt.wantObs)
			}
			if !strings.Contains(body, fmt.Sprintf("**Step %d**", tt.wantStep)) {
				t.Errorf("step %d missing", tt.wantStep)
			}
			if !strings.HasSuffix(body, "</details>\n") || !strings.Contains(body, "needs human review") {
				t.Error("body lacks the closed transcript or the review warning")
			}
		})
	}
}

func TestUntrustedTextStaysInert(t *testing.T) {
	t.Parallel()
	r := longResult(1, "```\n</details>\n# injected heading\n```")
	body := PRBody(r, Fit{})
	// The model's words are in a code block, where GitHub neither mentions people nor
	// links (or, with closing keywords, closes) other issues.
	if !strings.Contains(body, "```text\nDone. cc @octocat, closes #12\n```") {
		t.Errorf("final message not in a code block:\n%s", body)
	}
	// An observation that holds a code fence cannot end ours: the fence around it is longer.
	if !strings.Contains(body, "````text\n```\n</details>") {
		t.Errorf("observation fence not lengthened:\n%s", body)
	}
}

func TestCodeBlock(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "```text\nplain\n```\n"},
		{"a ``` b\n", "````text\na ``` b\n````\n"},
		{"`````", "``````text\n`````\n``````\n"},
		{"crlf\r\nbidi\u202e\n", "```text\ncrlf\nbidi<U+202E>\n```\n"},
	}
	for _, tt := range tests {
		if got := codeBlock(tt.in, "text"); got != tt.want {
			t.Errorf("codeBlock(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		cell bool
		want string
	}{
		{"a | b", false, "`a | b`"},
		{"a | b", true, "`a \\| b`"},
		{"`x`", false, "`` `x` ``"},
		{"a``b", false, "```a``b```"},
		{" lead", false, "`  lead `"},
		{"   ", false, "`   `"},
		{"", false, "_(empty)_"},
		{"x\u202ey\nz", false, "`x<U+202E>y<U+000A>z`"},
	}
	for _, tt := range tests {
		got := codeSpan(tt.in, 0)
		if tt.cell {
			got = codeCell(tt.in, 0)
		}
		if got != tt.want {
			t.Errorf("codeSpan(%q, cell %v) = %q, want %q", tt.in, tt.cell, got, tt.want)
		}
	}
}

func TestArgSummary(t *testing.T) {
	t.Parallel()
	tests := []struct{ tool, args, want string }{
		{"Read", `{"file_path": "a/b.py"}`, "a/b.py"},
		{"Read", `{"path": "a/b.py"}`, "a/b.py"},
		{"Glob", `{"pattern": "**/*.go", "path": "src"}`, "**/*.go in src"},
		// Plain text for a terminal: no markdown escaping, one line.
		{"Bash", `{"command": "go test ./...\necho | done"}`, `go test ./... echo | done`},
		{"Bash", `{"command": "ls \u001b[2J\u202e"}`, `ls <U+001B>[2J<U+202E>`},
		{"Bash", `{not json`, "{not json"},
		{"Frob", `{"b": 1, "a": 2}`, "a,b"},
		{"Bash", `{"command": "` + strings.Repeat("y", 200) + `"}`, strings.Repeat("y", 79) + "…"},
	}
	for _, tt := range tests {
		if got := ArgSummary(tt.tool, tt.args); got != tt.want {
			t.Errorf("ArgSummary(%s, %q) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}

func TestSummaryReportsWhatWasTried(t *testing.T) {
	t.Parallel()
	r := longResult(2, "x")
	r.Leaf.ExitReason = leaf.ExitMaxTurns
	r.Patch = &patch.Checked{}
	r.TestsAfter = nil
	s := Summary(r, Fit{})
	for _, want := range []string{"`max_turns` (the step limit was reached)", "Patch: empty", "| after (with the patch) | not run |", "Steps: 2"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestHeadline(t *testing.T) {
	t.Parallel()
	withTests := longResult(1, "x")
	withTests.TestCommand = "python3 -m pytest -q"
	withTests.Comparison = &verify.Comparison{PerTest: true, Fixed: []string{"a", "b"}, StillFailing: []string{"c"}}
	withTests.Patch.Dropped = []patch.Dropped{{Path: ".github/workflows/ci.yml", Reason: patch.DropWorkflow}}

	noTests := longResult(1, "x")
	noTests.TestCommand = ""

	broken := longResult(1, "x")
	broken.TestsAfter = &runner.TestRun{Error: "applying the patch: git apply exited 1"}

	tests := []struct {
		name string
		r    *runner.Result
		want string
	}{
		{"TestsAndDropped", withTests, "Tests (`python3 -m pytest -q`): failing (exit 1) before, passing with the patch; 2 fixed, 0 broken, 1 still failing. 1 path(s) were left out of the patch (listed in the pull request)."},
		{"NoTestCommand", noTests, "No tests were run (no test command was found)."},
		{"AfterRunBroke", broken, "The tests could not be run before and after; see the pull request."},
	}
	for _, tt := range tests {
		if got := Headline(tt.r); got != tt.want {
			t.Errorf("%s: Headline() =\n%q\nwant\n%q", tt.name, got, tt.want)
		}
	}
}

// BenchmarkPRBody renders the body of a long run (1,000 steps of 30,000-character
// observations), far over GitHub's limit, with a redactor.
func BenchmarkPRBody(b *testing.B) {
	r := longResult(1000, strings.Repeat("x", 30000))
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cr3t!!", "[REDACTED]") }
	for b.Loop() {
		_ = PRBody(r, Fit{Suffix: "\n\nFixes #1", Redact: redact})
	}
}

// BenchmarkPRBodyGitleaks is BenchmarkPRBody with gitleaks' rules as the redactor, as
// run.OutcomeOf renders it (githubapp.RedactRun): the cost of redacting every text of the run
// that code the patch controls may have written.
func BenchmarkPRBodyGitleaks(b *testing.B) {
	r := longResult(1000, strings.Repeat("x", 30000))
	for b.Loop() {
		_ = PRBody(r, Fit{Suffix: "\n\nFixes #1", Redact: secrets.Redact})
	}
}

// TestFactsNameTheModel: the facts of the PR body and the report name the operator's model
// (with the served one) and, after an escalation, the model that tried first; a local run's
// facts give the served model alone.
func TestFactsNameTheModel(t *testing.T) {
	t.Parallel()
	r := longResult(1, "x")
	for _, text := range []string{PRBody(r, Fit{}), Markdown(r)} {
		if !strings.Contains(text, "- Model: `m`\n") || strings.Contains(text, "Escalated") {
			t.Errorf("a local run's facts:\n%s", text)
		}
	}
	r.ModelName, r.EscalatedFrom = "large", "default"
	for _, text := range []string{PRBody(r, Fit{}), Markdown(r)} {
		for _, want := range []string{"- Model: `large` (`m`)\n",
			"- Escalated: no attempt of model `default` passed the tests, so model `large` tried and wrote this patch\n"} {
			if !strings.Contains(text, want) {
				t.Errorf("the facts lack %q:\n%s", want, text)
			}
		}
	}
}
