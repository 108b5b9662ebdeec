package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// Hostile text the model wrote: raw HTML of every kind GitHub would keep or hide, markdown
// that would link, ping or emphasise, and characters that hide or reorder text.
const (
	hostileFinal = "Done. <details open><summary>Click</summary>hidden</details> <img src=x onerror=alert(1)> " +
		"<!-- a comment hides the rest --> *emph* _under_ [link](javascript:alert(1)) https://evil.example @octocat closes #12\n" +
		"# not a heading\n| not | a table |\n|---|---|\n- [ ] not a task\nbidi \u202egnp.exe zero\u200bwidth tag\U000E0041 ~~strike~~"
	hostileThought = "Let me look. <script>alert(1)</script> <b>bold</b> @admin"
)

// hostileCalls are the tool calls of the golden run, with what the transcript must show
// for each: the argument exactly, invisible characters as code points.
var hostileCalls = []struct {
	tool, args, want string
}{
	{"Bash", `{"command": "python3 -m unittest -q 2>&1 | tail -n 1"}`, "python3 -m unittest -q 2>&1 | tail -n 1"},
	{"Read", `{"file_path": "src/app.py"}`, "src/app.py"},
	{"Bash", "{\"command\": \"echo `whoami` && printf '%s' \\\"a*b_c*\\\" <in >out\"}", "echo `whoami` && printf '%s' \"a*b_c*\" <in >out"},
	{"Bash", "{\"command\": \"cat <<'EOF'\\n<details><summary>x</summary>\\n**bold** | pipe\\nEOF\\n\"}", "cat <<'EOF'\n<details><summary>x</summary>\n**bold** | pipe\nEOF\n"},
	{"Glob", `{"pattern": "**/*_test.py", "path": "src"}`, "**/*_test.py"},
	{"Edit", `{"file_path": "src/evil\u202egnp.py", "old_string": "a", "new_string": "b"}`, "src/evil<U+202E>gnp.py"},
	{"Bash", "{\"command\": \"``` <!-- x --> ```\"}", "``` <!-- x --> ```"},
	{"Bash", "{\"command\": \" leading and trailing \"}", " leading and trailing "},
}

const hostileDiff = `diff --git a/conftest.py b/conftest.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,3 @@
+def pytest_runtest_makereport(item, call):
+    if call.excinfo is not None:
+        call.excinfo = None
diff --git a/pyproject.toml b/pyproject.toml
index 2222222..3333333 100644
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -10,2 +10,3 @@
 [tool.pytest.ini_options]
 minversion = "7"
+xfail_strict = false
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git "a/src/app\342\200\256yp.py" "b/src/app\342\200\256yp.py"
index 4444444..5555555 100644
--- "a/src/app\342\200\256yp.py"
+++ "b/src/app\342\200\256yp.py"
@@ -1 +1 @@
-x = 1
+x = 2
diff --git a/tests/test_average.py b/tests/test_average.py
new file mode 100644
index 0000000..7777777
--- /dev/null
+++ b/tests/test_average.py
@@ -0,0 +1,7 @@
+import pytest
+from app import average
+
+
+def test_empty():
+    with pytest.raises(ValueError):
+        average([])
diff --git a/docs/<script>|a.md b/docs/<script>|a.md
new file mode 100755
index 0000000..6666666
--- /dev/null
+++ b/docs/<script>|a.md
@@ -0,0 +1 @@
+hi
`

// hostileResult is a finished run whose every untrusted field holds hostile text.
func hostileResult(t *testing.T) *runner.Result {
	t.Helper()
	p, err := patch.Parse([]byte(hostileDiff))
	if err != nil {
		t.Fatal(err)
	}
	lr := &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: hostileFinal, PromptTokens: 9000, CompletionTokens: 700,
		ContextTokens: 4000, ModelTime: 20 * time.Second, ToolTime: 3 * time.Second}
	for i, c := range hostileCalls {
		lr.Steps = append(lr.Steps, leaf.Step{
			Index: i,
			Assistant: leaf.Message{Role: "assistant", Content: text(hostileThought),
				ToolCalls: []leaf.ToolCall{{ID: fmt.Sprint(i), Type: "function", Function: leaf.FunctionCall{Name: c.tool, Arguments: c.args}}}},
			Observations: []leaf.Observation{{Tool: c.tool, Observation: "```\n</details>\n<img src=x>\n# heading @octocat\u202e"}},
		})
	}
	// A step with two calls, one to a tool that does not exist, and the final answer.
	lr.Steps = append(lr.Steps, leaf.Step{
		Index: len(lr.Steps),
		Assistant: leaf.Message{Role: "assistant", ToolCalls: []leaf.ToolCall{
			{ID: "a", Type: "function", Function: leaf.FunctionCall{Name: "<img src=x>", Arguments: `{"a": "<b>"}`}},
			{ID: "b", Type: "function", Function: leaf.FunctionCall{Name: "Read", Arguments: `{"file_path": "a_b*c*.py"}`}},
		}},
		Observations: []leaf.Observation{{Tool: "<img src=x>", Observation: "unknown tool"}, {Tool: "Read", Observation: "x"}},
	}, leaf.Step{Index: len(lr.Steps) + 1, Assistant: leaf.Message{Role: "assistant", Content: text(hostileFinal)}})
	return &runner.Result{
		RunID: "golden", Task: "Fix <details>it</details> \u202eplease", Model: "microsoft/FrogNano-4B-2609",
		BaseCommit: "0123456789abcdef0123456789abcdef01234567", TestCommand: "python3 -m pytest -q | tee out",
		Elapsed: 30 * time.Second, Leaf: lr,
		Patch: &patch.Checked{Diff: []byte(hostileDiff), Files: p.Files, Size: int64(len(hostileDiff)),
			Dropped: []patch.Dropped{{Path: ".github/workflows/<b>ci</b>.yml", Reason: patch.DropWorkflow}}},
		TestsBefore: &runner.TestRun{Outcome: verify.Outcome{Command: "python3 -m pytest -q", ExitCode: 1, Duration: 2 * time.Second,
			Tail: "FAILED tests/test_a.py::test_x - <details>\n1 failed", Tests: map[string]verify.Status{"tests/test_a.py::test_x": verify.Fail}}},
		TestsAfter: &runner.TestRun{Outcome: verify.Outcome{Command: "python3 -m pytest -q", ExitCode: 0, Duration: 2 * time.Second,
			Tail: "1 passed", Tests: map[string]verify.Status{"tests/test_a.py::test_x": verify.Pass}}, PatchApplied: true},
		Comparison: &verify.Comparison{PerTest: true, Fixed: []string{"tests/test_a.py::test_x[<img src=x>|`a`]"}},
		Notes:      []string{"A note quoting <b>tool</b> output: @octocat see https://evil.example and #12 and deadbeefcafe."},
	}
}

// ourElements are the elements our templates write; anything else in the rendered HTML
// came from untrusted text.
var ourElements = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "ul": true, "li": true, "table": true, "thead": true,
	"tbody": true, "tr": true, "th": true, "td": true, "code": true, "pre": true, "details": true,
	"summary": true, "strong": true, "em": true, "blockquote": true,
}

// checkInert proves on the rendered HTML that no element, comment or invisible character
// came from untrusted text (githubtest.CheckInert, with the elements our templates write) and
// that it holds exactly the <details> we write, details times.
func checkInert(t *testing.T, md string, details int, links ...string) {
	t.Helper()
	n, _ := githubtest.CheckInert(t, md, githubtest.Inert{Elements: ourElements, Links: links, Invisible: Invisible})
	if n != details {
		t.Errorf("rendered HTML holds %d <details>, want the %d we write", n, details)
	}
}

// checkCalls proves that after each tool's name, what a reader sees is its argument.
func checkCalls(t *testing.T, md string, want []string) {
	t.Helper()
	var got []string
	for _, l := range githubtest.LabeledCode(githubtest.ShowAsGitHub(md)) {
		if !knownTools[l.Label] {
			continue
		}
		c := l.Code
		if l.InBlock {
			c = strings.TrimSuffix(c, "\n")
		}
		got = append(got, c)
	}
	if len(got) != len(want) {
		t.Fatalf("%d tool calls shown, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tool call %d shows\n%q\nwant\n%q", i+1, got[i], want[i])
		}
	}
}

func TestPRBodyGolden(t *testing.T) {
	t.Parallel()
	r := hostileResult(t)
	body := PRBody(r, Fit{Suffix: "\n\nFixes #7"})
	golden.Check(t, "runner-pr-body.md", body)
	golden.Check(t, "runner-pr-body.html", githubtest.ShowAsGitHub(body))

	// Three <details>: the two test outputs and the transcript.
	checkInert(t, body, 3)
	var want []string
	for _, c := range hostileCalls {
		want = append(want, c.want)
	}
	checkCalls(t, body, append(want, "a_b*c*.py"))

	shown := githubtest.VisibleText(githubtest.ShowAsGitHub(body))
	codes := strings.Join(githubtest.ElementTexts(githubtest.ShowAsGitHub(body), "code"), "\x00")
	for _, w := range []string{
		// The model's final message and thoughts, as written, in code.
		visible(hostileFinal, true), visible(hostileThought, true),
		// File names with HTML, pipes and a right-to-left override, visible as written.
		"docs/<script>|a.md", "src/app<U+202E>yp.py",
		// The unknown tool's name, the test name, the test command.
		"<img src=x>", "tests/test_a.py::test_x[<img src=x>|`a`]", "python3 -m pytest -q | tee out",
	} {
		if !strings.Contains(codes, w) {
			t.Errorf("no code element shows %q", w)
		}
	}
	for _, w := range []string{
		"The test result may not be trustworthy.", "conftest.py: pytest loads it before the tests",
		`pyproject.toml: changes the "tool.pytest.ini_options" section of pyproject.toml (test settings)`,
		"mode 100644 → 100755 (executable)", "added, mode 100755 (executable)",
		"A note quoting <b>tool</b> output: @octocat see https://evil.example and #12 and deadbeefcafe.",
	} {
		if !strings.Contains(shown, w) {
			t.Errorf("a reader does not see %q", w)
		}
	}
	if !strings.HasSuffix(body, "</details>\n\n\nFixes #7") {
		t.Errorf("body does not end with the closed transcript and the Fixes line: %q", body[max(0, len(body)-80):])
	}
}

func TestReportGolden(t *testing.T) {
	t.Parallel()
	r := hostileResult(t)
	md := Markdown(r)
	golden.Check(t, "runner-report.md", md)
	golden.Check(t, "runner-report.html", githubtest.ShowAsGitHub(md))
	checkInert(t, md, 2)
	shown := githubtest.VisibleText(githubtest.ShowAsGitHub(md))
	for _, w := range []string{"The test result may not be trustworthy.", "Fix <details>it</details> <U+202E>please", visible(hostileFinal, true)} {
		if !strings.Contains(shown, w) {
			t.Errorf("a reader does not see %q", w)
		}
	}
}

func TestSummaryGolden(t *testing.T) {
	t.Parallel()
	r := hostileResult(t)
	r.TestsAfter, r.Comparison = nil, nil
	s := Summary(r, Fit{})
	golden.Check(t, "runner-summary.md", s)
	checkInert(t, s, 1)
}

func TestHeadlineFlagsTestConfiguration(t *testing.T) {
	t.Parallel()
	h := Headline(hostileResult(t))
	golden.Check(t, "runner-headline.md", h+"\n")
	checkInert(t, h, 0)
	shown := githubtest.VisibleText(githubtest.ShowAsGitHub(h))
	for _, w := range []string{"The test result may not be trustworthy:", "conftest.py (pytest loads it", "pyproject.toml (changes the"} {
		if !strings.Contains(shown, w) {
			t.Errorf("headline does not show %q:\n%s", w, shown)
		}
	}
	// A patch that only changes code raises no doubt.
	if h := Headline(longResult(1, "x")); strings.Contains(h, "trustworthy") {
		t.Errorf("headline of a code-only patch: %q", h)
	}
}

// Issue 18: a new test file that only adds tests is listed as new tests, in plain words,
// in every rendering, and raises no warning; one that runs code at import keeps it.
func TestNewTestFileIsListedNotFlagged(t *testing.T) {
	t.Parallel()
	const plain = "diff --git a/tests/test_average.py b/tests/test_average.py\nnew file mode 100644\nindex 0000000..1111111\n" +
		"--- /dev/null\n+++ b/tests/test_average.py\n@@ -0,0 +1,6 @@\n+import pytest\n+from app import average\n+def test_empty():\n" +
		"+    with pytest.raises(ValueError):\n+        average([])\n+def test_one(): assert average([1]) == 1\n"
	const sideEffect = "diff --git a/tests/test_env.py b/tests/test_env.py\nnew file mode 100644\nindex 0000000..2222222\n" +
		"--- /dev/null\n+++ b/tests/test_env.py\n@@ -0,0 +1,3 @@\n+import os\n+os.environ[\"PYTEST_ADDOPTS\"] = \"-p no:x\"\n+def test_env(): pass\n"
	render := func(t *testing.T, diff string) map[string]string {
		p, err := patch.Sanitize([]byte(diff), patch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := longResult(1, "x")
		r.Patch = p
		r.Comparison = &verify.Comparison{PerTest: true, Fixed: []string{"tests/test_a.py::test_x"}, New: []string{"tests/test_average.py::test_empty"}}
		out := map[string]string{"PR body": PRBody(r, Fit{}), "report": Markdown(r), "headline": Headline(r), "summary": Summary(r, Fit{})}
		c := Check(r, nil)
		out["check run"] = c.Summary
		for name, text := range out {
			out[name] = githubtest.VisibleText(githubtest.ShowAsGitHub(text))
		}
		return out
	}
	for name, shown := range render(t, plain) {
		if strings.Contains(shown, "trustworthy") {
			t.Errorf("%s warns about a plain new test file:\n%s", name, shown)
		}
		if !strings.Contains(shown, "New test files: tests/test_average.py (2 test functions)") {
			t.Errorf("%s does not list the new test file:\n%s", name, shown)
		}
	}
	for name, shown := range render(t, plain+sideEffect) {
		if !strings.Contains(shown, "The test result may not be trustworthy") || !strings.Contains(shown, "tests/test_env.py") {
			t.Errorf("%s does not warn about a new test module with an import-time side effect:\n%s", name, shown)
		}
		if name != "headline" && !strings.Contains(shown, `it imports "os"`) {
			t.Errorf("%s does not say why tests/test_env.py keeps the warning:\n%s", name, shown)
		}
		if !strings.Contains(shown, "New test files: tests/test_average.py (2 test functions)") {
			t.Errorf("%s does not list the plain new test file beside the warning:\n%s", name, shown)
		}
	}
}

// The case of #7.4: a patch that only adds a conftest.py turning failures into passes is
// reported as fixing the failing test; the report must say the result may be faked.
func TestConftestOnlyPatchIsFlagged(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1,2 @@\n" +
		"+def pytest_runtest_logreport(report):\n+    report.outcome = \"passed\"\n"
	p, err := patch.Sanitize([]byte(diff), patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := longResult(1, "x")
	r.Patch = p
	r.Comparison = &verify.Comparison{PerTest: true, Fixed: []string{"tests/test_a.py::test_x"}}
	for name, text := range map[string]string{"PR body": PRBody(r, Fit{}), "report": Markdown(r), "headline": Headline(r), "summary": Summary(r, Fit{})} {
		shown := githubtest.VisibleText(githubtest.ShowAsGitHub(text))
		if !strings.Contains(shown, "The test result may not be trustworthy") || !strings.Contains(shown, "conftest.py") {
			t.Errorf("%s does not warn about conftest.py:\n%s", name, shown)
		}
	}
}

func TestReportShowsConfiguredPatchLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int64
		want  string
	}{
		{"Configured", 2048, "over the 2048-byte limit"},
		{"Default", 0, fmt.Sprintf("over the %d-byte limit", patch.DefaultMaxBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := longResult(1, "x")
			r.MaxPatchBytes = tt.limit
			r.Patch = &patch.Checked{TooLarge: true, Size: 5000}
			for name, text := range map[string]string{"report": Markdown(r), "PR body": PRBody(r, Fit{}), "summary": Summary(r, Fit{})} {
				if !strings.Contains(text, "Patch: 5000 bytes, "+tt.want) {
					t.Errorf("%s lacks %q", name, tt.want)
				}
			}
		})
	}
}

// growingRedact stands for a redactor whose replacement is longer than what it replaces
// (a registered 8-character secret becomes the 10-character "[REDACTED]").
func growingRedact(s string) string { return strings.ReplaceAll(s, "s3cr3t!!", "[REDACTED]") }

// The body GitHub gets is the renderer's, whole: over the limit it is cut by the renderer
// only, keeping the closed transcript, the cut note and the caller's Fixes line, and it is
// within GitHub's limit after the caller's redaction.
func TestPRBodyOverTheLimitKeepsItsEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps int
		obs   string
	}{
		{"ManySteps", 2000, strings.Repeat("s3cr3t!! ", 60)},
		{"HugeObservations", 300, strings.Repeat("s3cr3t!!", 20000)},
		{"Multibyte", 1500, strings.Repeat("é漢🐸", 400)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := longResult(tt.steps, tt.obs)
			const fixes = "\n\nFixes #4242"
			body := PRBody(r, Fit{Suffix: fixes, Redact: growingRedact})
			if n := runeLen(body); n > GitHubBodyLimit {
				t.Errorf("body has %d characters, over GitHub's %d", n, GitHubBodyLimit)
			}
			if n := runeLen(growingRedact(body)); n > GitHubBodyLimit {
				t.Errorf("redacted again, the body has %d characters", n)
			}
			if strings.Contains(body, "s3cr3t!!") {
				t.Error("a secret is left in the body")
			}
			if !strings.HasSuffix(body, "\n</details>\n"+fixes) {
				t.Errorf("body does not end with the closed transcript and the Fixes line: %q", body[max(0, len(body)-200):])
			}
			if !strings.Contains(body, "The transcript was cut here") {
				t.Error("no note says the transcript was cut")
			}
			checkInert(t, body, 3)
		})
	}
}
