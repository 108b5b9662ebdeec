package run

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// statusElements are the elements the status comment's templates write.
var statusElements = map[string]bool{
	"p": true, "h2": true, "h3": true, "ul": true, "li": true, "table": true, "thead": true, "tbody": true,
	"tr": true, "th": true, "td": true, "code": true, "pre": true, "strong": true, "em": true,
	"blockquote": true, "details": true, "summary": true,
}

// checkStatusInert proves on the rendered comment that nothing from the model became
// markup (githubtest.CheckInert): the only comment is our one marker, every element is one of
// ours (links only to the allowed addresses, <details> only as we write it), and a reader sees
// no invisible character.
func checkStatusInert(t *testing.T, body string, links ...string) {
	t.Helper()
	_, comments := githubtest.CheckInert(t, body, githubtest.Inert{
		Elements:  statusElements,
		Links:     links,
		Comment:   func(raw string) bool { return strings.HasPrefix(raw, "<!-- frognano:run:") },
		Invisible: report.Invisible,
	})
	if comments > 1 {
		t.Errorf("rendered comment holds %d HTML comments, want only the marker", comments)
	}
}

// shownCalls is what a reader sees after each known tool's name.
func shownCalls(body string) []string {
	var out []string
	for _, l := range githubtest.LabeledCode(githubtest.ShowAsGitHub(body)) {
		switch l.Label {
		case "Read", "Write", "Edit", "Glob", "Bash":
			out = append(out, strings.TrimSuffix(l.Code, "\n"))
		}
	}
	return out
}

// The status comment names every tool of a step with its argument, exactly as the model
// wrote it, and says when the step was the final answer: never a made-up "tool".
func TestStatusProgressShowsEachCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		calls     []Call
		want      []string // the arguments a reader sees, in order
		wantWords []string // other words a reader sees
	}{
		{"TwoTools", []Call{{"Read", `{"file_path": "a.py"}`}, {"Bash", `{"command": "python3 -m unittest -q 2>&1 | tail -n 1"}`}},
			[]string{"a.py", "python3 -m unittest -q 2>&1 | tail -n 1"}, []string{"Step 3 (12s elapsed):", "Read", "Bash"}},
		{"FinalAnswer", nil, nil, []string{"Step 3: the model gave its final answer (12s elapsed)."}},
		{"Backticks", []Call{{"Bash", "{\"command\": \"echo `id` *a* _b_ <details>\"}"}}, []string{"echo `id` *a* _b_ <details>"}, nil},
		{"Multiline", []Call{{"Bash", `{"command": "cat <<EOF\n<img src=x>\nEOF"}`}}, []string{"cat <<EOF\n<img src=x>\nEOF"}, nil},
		{"Bidi", []Call{{"Read", "{\"file_path\": \"evil\u202egnp.py\"}"}}, []string{"evil<U+202E>gnp.py"}, nil},
		{"UnknownTool", []Call{{"<img src=x>", `{"a": 1}`}, {"Glob", `{"pattern": "*.go"}`}}, []string{"*.go"}, []string{"Unknown tool <img src=x> with arguments"}},
		{"ManyCalls", func() []Call {
			var cs []Call
			for i := 0; i < 12; i++ {
				cs = append(cs, Call{"Read", `{"file_path": "x.py"}`})
			}
			return cs
		}(), []string{"x.py", "x.py", "x.py", "x.py", "x.py", "x.py", "x.py", "x.py", "x.py", "x.py"}, []string{"and 2 more tool calls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := RenderStatus(Status{RunID: 9, State: StateRunning, Progress: &Progress{Step: 3, Calls: tt.calls, Elapsed: 12 * time.Second}})
			checkStatusInert(t, body)
			got := shownCalls(body)
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("calls shown %q, want %q\n%s", got, tt.want, body)
			}
			shown := githubtest.VisibleText(githubtest.ShowAsGitHub(body))
			for _, w := range tt.wantWords {
				if !strings.Contains(shown, w) {
					t.Errorf("a reader does not see %q in:\n%s", w, shown)
				}
			}
			for _, line := range strings.Split(shown, "\n") {
				if strings.HasPrefix(line, "tool ") || strings.Contains(line, ": tool ") {
					t.Errorf("a step shown as \"tool\":\n%s", shown)
				}
			}
		})
	}
}

// statusResult is a finished run whose model wrote hostile text, with a patch that adds a
// conftest.py.
func statusResult(t *testing.T) *runner.Result {
	t.Helper()
	diff := "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1,2 @@\n" +
		"+def pytest_runtest_logreport(report):\n+    report.outcome = \"passed\"\n"
	p, err := patch.Sanitize([]byte(diff), patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	final := "Fixed. <details open><summary>x</summary>y</details> <img src=x> <!-- hide --> @octocat #12 \u202eevil"
	return &runner.Result{
		RunID: "run-9", Model: "m", BaseCommit: "0123456789abcdef0123456789abcdef01234567", TestCommand: "python3 -m pytest -q",
		Leaf: &leaf.Result{ExitReason: leaf.ExitMaxTurns, FinalMessage: final,
			Steps: []leaf.Step{{Assistant: leaf.Message{Role: "assistant", Content: &final}}}},
		Patch:       p,
		TestsBefore: &runner.TestRun{Outcome: verify.Outcome{Command: "python3 -m pytest -q", ExitCode: 1, Tail: "1 failed <img src=x>"}},
		TestsAfter:  &runner.TestRun{Outcome: verify.Outcome{Command: "python3 -m pytest -q", ExitCode: 0, Tail: "1 passed"}, PatchApplied: true},
		Comparison:  &verify.Comparison{PerTest: true, Fixed: []string{"tests/test_a.py::test_x"}},
	}
}

func TestStatusGolden(t *testing.T) {
	t.Parallel()
	res := statusResult(t)
	const prURL = "https://github.example/octo/pager/pull/77"
	tests := []struct {
		name  string
		view  Status
		links []string
	}{
		{"running", Status{RunID: 9, State: StateRunning, Progress: &Progress{Step: 4, Elapsed: 75 * time.Second, Calls: []Call{
			{"Read", `{"file_path": "src/<b>x</b>.py"}`},
			{"Bash", `{"command": "python3 -m unittest -q 2>&1 | tail -n 1"}`},
			{"Frob", `{"x": "<img src=x>"}`},
		}}}, nil},
		{"succeeded", Status{RunID: 9, State: StateSucceeded, PRURL: prURL, PRNumber: 77, Note: report.Headline(res),
			ExitReason: "agent", Steps: 12, Elapsed: 90 * time.Second}, []string{prURL}},
		{"failed", Status{RunID: 9, State: StateFailed, Note: "The agent finished without changing any file, so there is no pull request.",
			ExitReason: "max_turns", Steps: 100, Elapsed: 90 * time.Second,
			Summary: report.Summary(res, report.Fit{Limit: report.GitHubBodyLimit - statusReserve, Redact: githubapp.Redact})}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := RenderStatus(tt.view)
			golden.Check(t, "queue-status-"+tt.name+".md", body)
			golden.Check(t, "queue-status-"+tt.name+".html", githubtest.ShowAsGitHub(body))
			checkStatusInert(t, body, tt.links...)
			if tt.name == "running" {
				if got := shownCalls(body); strings.Join(got, "|") != "src/<b>x</b>.py|python3 -m unittest -q 2>&1 | tail -n 1" {
					t.Errorf("calls shown %q", got)
				}
			}
			if tt.name != "running" {
				shown := githubtest.VisibleText(githubtest.ShowAsGitHub(body))
				if !strings.Contains(shown, "The test result may not be trustworthy") || !strings.Contains(shown, "conftest.py") {
					t.Errorf("the comment does not warn about conftest.py:\n%s", shown)
				}
			}
		})
	}
}

// The status comment is within GitHub's limit without cutting markdown: an oversized
// summary is replaced by a pointer to the run's report.
func TestRenderStatusWithinLimit(t *testing.T) {
	t.Parallel()
	summary := "<details>\n<summary>x</summary>\n\n" + strings.Repeat("é", report.GitHubBodyLimit) + "\n</details>\n"
	body := RenderStatus(Status{RunID: 1, State: StateFailed, Summary: summary})
	if n := utf8.RuneCountInString(body); n > report.GitHubBodyLimit || !utf8.ValidString(body) {
		t.Errorf("comment has %d characters (valid UTF-8 %v)", n, utf8.ValidString(body))
	}
	if !strings.Contains(body, "frognano runs show 1 --report") || strings.Contains(body, "<details>") {
		t.Errorf("oversized summary not replaced:\n%.300s", body)
	}
	// A summary the runner rendered for the comment fits with everything around it.
	res := statusResult(t)
	res.Leaf.FinalMessage = strings.Repeat("漢", 200000)
	for i := 0; i < 3000; i++ {
		res.Comparison.StillFailing = append(res.Comparison.StillFailing, strings.Repeat("t", 140))
	}
	s := report.Summary(res, report.Fit{Limit: report.GitHubBodyLimit - statusReserve, Redact: githubapp.Redact})
	progress := &Progress{Step: 1}
	for i := 0; i < 20; i++ {
		progress.Calls = append(progress.Calls, Call{"Bash", `{"command": "` + strings.Repeat("x", 5000) + `"}`})
	}
	body = RenderStatus(Status{RunID: 1, State: StateFailed, Note: report.Headline(res), Summary: s, Progress: progress, ExitReason: "max_turns", Steps: 100})
	if n := utf8.RuneCountInString(body); n > report.GitHubBodyLimit || strings.Contains(body, "frognano runs show") {
		t.Errorf("comment has %d characters; summary replaced: %v", n, strings.Contains(body, "frognano runs show"))
	}
}

// bigResult is a finished run whose transcript is far over GitHub's limit, with a secret
// in its observations that the redaction replaces.
func bigResult() *runner.Result {
	lr := &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "Done."}
	for i := 0; i < 400; i++ {
		out := strings.Repeat("ghs_"+strings.Repeat("A", 36)+" é ", 30)
		lr.Steps = append(lr.Steps, leaf.Step{Index: i,
			Assistant:    leaf.Message{Role: "assistant", ToolCalls: []leaf.ToolCall{{ID: "c", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command": "cat big | tail -n 1"}`}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: out}}})
	}
	return &runner.Result{RunID: "run-1", Model: "m", BaseCommit: "abc", Leaf: lr,
		Patch: &patch.Checked{Diff: []byte("diff"), Files: []patch.File{{OldPath: "a.go", NewPath: "a.go", Status: "modified", Added: 1, Deleted: 1}}}}
}
