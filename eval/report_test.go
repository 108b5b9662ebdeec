package eval

import (
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
)

// TestReportGolden: report.md with text written by strangers (instance ids and errors with
// pipes, backticks, HTML, a heading, invisible characters, a malformed line's message) renders
// every such text inert: a code span that cannot end early, break the table or hide text.
func TestReportGolden(t *testing.T) {
	t.Parallel()
	score := ScoreTests(nil, []string{"a"}, nil)
	recs := []*Record{
		{InstanceID: "acme__widget-1", Status: StatusResolved, Resolved: true, Tests: &Score{FailToPass: map[string]string{"t.a": "pass"}, PassToPass: map[string]string{"t.b": "pass"}},
			Steps: 12, PromptTokens: 10000, CompletionTokens: 500, ExitReason: "agent"},
		{InstanceID: "x | y ` <b>z</b>", Status: StatusUnresolved, Tests: &Score{FailToPass: map[string]string{"t.a": "fail", "t.c": "pass"}, PassToPass: map[string]string{}},
			Steps: 100, ExitReason: "max_steps", Error: "the tests timed out"},
		{InstanceID: "hidden\u202etxt.exe", Status: StatusError, Tests: &score, Error: "1 test id(s) not found in the results: `a` | <script>alert(1)</script>\n# heading"},
	}
	bad := []*LineError{{Line: 7, Err: errors.New("not a JSON object: invalid character '`' | looking")}}
	md := Report(recs, 5, bad)
	golden.Check(t, "eval-report.md", md)
	html := githubtest.ShowAsGitHub(md)
	golden.Check(t, "eval-report.html", html)
	for _, bad := range []string{"<script>", "<b>", "\u202e"} {
		if strings.Contains(html, bad) {
			t.Errorf("the rendered report holds %q", bad)
		}
	}
	if !strings.Contains(md, "1 of 2 resolved: 50.0% (95% interval 9.5% to 90.5%)") {
		t.Errorf("report:\n%s", md)
	}
}
