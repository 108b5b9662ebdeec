package main

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestServiceAttemptsNoneFixes: with FROGNANO_ATTEMPTS=2 and neither attempt changing a file
// (one reads the code and finds nothing wrong, one answers at once), the run ends without a
// pull request and its status comment says what each attempt tried, in the attempts table.
func TestServiceAttemptsNoneFixes(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "finish-immediately.json")
	look := leaftest.NewServer(t, leaftest.Script{Turns: []leaftest.Turn{
		{ToolCalls: []leaftest.ToolCall{{ID: "call_look", Name: "Read", Arguments: `{"file_path": "stats/basic.py"}`}}},
		{Content: "average() looks right to me; I changed nothing."},
	}})
	e.env["FROGNANO_MODEL_URL"] = leaftest.NewRouter(t, nil, e.model, look).URL
	e.env["FROGNANO_ATTEMPTS"] = "2"
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "failed")
	if prs := e.gh.PRs(e.repo); len(prs) != 0 {
		t.Fatalf("%d PRs, want none", len(prs))
	}
	var body string
	svcWait(t, 30*time.Second, "the final status comment", func() (bool, string) {
		body = e.onlyComment().Body
		return strings.Contains(body, "without a pull request"), body
	})
	for _, want := range []string{"2 independent attempts ran", "| 1 |", "| 2 |", "stats/basic.py", "Nothing to change", "Chosen: attempt"} {
		if !strings.Contains(body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, svcTail(body, 4000))
		}
	}
	e.waitNoContainers(30 * time.Second)
}
