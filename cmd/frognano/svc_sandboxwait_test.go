package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestServiceStatusSaysItWaitsForASandbox: with FROGNANO_MAX_SANDBOXES=1 the run's
// tests-before sandbox must wait while its agent's sandbox holds the one slot, and the running
// status comment says so ("waiting for a free sandbox for the tests before (1 of 1 in use on
// this worker)"). The model server holds its first answer until the fake GitHub has seen that
// edit, so the agent's sandbox holds the slot until then and nothing depends on timing. The
// run's page events say it too (sandbox_wait, and tests_start for the tests before and after);
// the run publishes its PR and the final comment no longer says it waits.
func TestServiceStatusSaysItWaitsForASandbox(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	const waitLine = "⏳ Waiting for a free sandbox for the tests before (1 of 1 in use on this worker)."
	// The first answer: once the status comment said the tests before wait.
	held := svcGateModel(t, e.model.URL, 1, "the status comment saying the run waits for a sandbox", func() (bool, string) {
		body := e.statusBody()
		return strings.Contains(body, waitLine), body
	}, nil)
	e.env["FROGNANO_MODEL_URL"] = held.URL
	e.env["FROGNANO_MAX_SANDBOXES"] = "1"
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "succeeded")
	var c = e.onlyComment()
	svcWait(t, 30*time.Second, "the final status comment", func() (bool, string) {
		c = e.onlyComment()
		return strings.Contains(c.Body, "opened a draft pull request"), c.Body
	})
	bodies := append(append([]string(nil), c.History...), c.Body)
	seen := false
	for _, b := range bodies {
		if strings.Contains(b, waitLine) {
			seen = true
			if !strings.Contains(b, "is working on this issue") {
				t.Errorf("a comment that is not the running one says the run waits:\n%s", b)
			}
		}
	}
	if !seen {
		t.Fatalf("no edit of the status comment said the run waits for a sandbox: %q", bodies)
	}
	if strings.Contains(c.Body, "Waiting for a free sandbox") {
		t.Errorf("the final comment still says the run waits:\n%s", c.Body)
	}
	var waits, starts int
	if err := e.db.QueryRow(context.Background(), `SELECT
			count(*) FILTER (WHERE kind = 'sandbox_wait' AND data->>'for' = 'the tests before' AND (data->>'cap')::int = 1),
			count(*) FILTER (WHERE kind = 'tests_start')
		FROM run_events WHERE run_id = $1`, id).Scan(&waits, &starts); err != nil {
		t.Fatal(err)
	}
	if waits != 1 || starts != 2 {
		t.Errorf("run events: %d waits of the tests before for a sandbox (want 1), %d tests starts (want 2)", waits, starts)
	}
	if len(e.gh.PRs(e.repo)) != 1 {
		t.Errorf("the run published %d PRs, want 1", len(e.gh.PRs(e.repo)))
	}
	e.waitNoContainers(30 * time.Second)
}
