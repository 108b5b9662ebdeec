package web

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// factsSection is the run page's facts list.
var factsSection = regexp.MustCompile(`(?s)<dl id="facts">.*?</dl>`)

func facts(t *testing.T, b *bundle, id int64) string {
	t.Helper()
	resp := b.get(t, "/runs/"+itoa(id), "alice")
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run %d: status %d", id, resp.StatusCode)
	}
	f := factsSection.FindString(string(raw))
	if f == "" {
		t.Fatalf("run %d's page has no facts:\n%.600s", id, raw)
	}
	return f
}

// TestRunPageSaysEachFigureOnce (issue 31): a finished run's facts give its tokens, each time
// and its tries once each (no second list under "Usage"); a running run's say in words that
// its tokens and time are not counted yet, with no "-" standing for a figure.
func TestRunPageSaysEachFigureOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, ExitReason: "agent", Steps: 4})
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET cached_tokens = 1200, agent_attempts = 2, model = 'large',
		sandbox_cpu_ms = 2000, sandbox_peak_bytes = 1048576 WHERE id = $1`, done); err != nil {
		t.Fatal(err)
	}
	f := facts(t, b, done)
	// The seed: 3000 prompt and 400 completion tokens; model 40 s, tools 5 s, tests 3 s,
	// 50 s in all; one try.
	for _, once := range []string{"3000 prompt (1200 cached), 400 completion", "50s in all: model 40s, tools 5s, tests 3s",
		"2s CPU, peak memory 1 MiB", "2 agent attempts in 1 try", "large"} {
		if n := strings.Count(f, once); n != 1 {
			t.Errorf("the facts say %q %d times, want once:\n%s", once, n, f)
		}
	}
	for _, figure := range []string{"3000", "400 completion", "40s", "5s", "3s", "50s", "1 try"} {
		if n := strings.Count(f, figure); n != 1 {
			t.Errorf("the facts give %q %d times, want once:\n%s", figure, n, f)
		}
	}
	for _, gone := range []string{"Usage", "Tries", "Elapsed", "Model time", "(s)"} {
		if strings.Contains(f, gone) {
			t.Errorf("the facts still hold %q:\n%s", gone, f)
		}
	}

	live := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET prompt_tokens = NULL, completion_tokens = NULL, model_ms = NULL,
		tool_ms = NULL, test_ms = NULL, elapsed_ms = NULL WHERE id = $1`, live); err != nil {
		t.Fatal(err)
	}
	f = facts(t, b, live)
	if !strings.Contains(f, "<dt>Tokens and time</dt><dd class=\"usage\">not yet: counted when the agent has finished</dd>") ||
		!strings.Contains(f, "1 try") {
		t.Errorf("a running run's facts:\n%s", f)
	}
	if regexp.MustCompile(`>-<| - |\(s\)`).MatchString(f) {
		t.Errorf("a running run's facts hold a dash or an (s) for a figure:\n%s", f)
	}
}
