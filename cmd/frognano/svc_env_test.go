package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestServiceSetupFailed: the repository's .frognano/setup.sh fails; the whole service (real
// PostgreSQL, real Docker, the fake GitHub) ends the run before any model call, with a status
// comment that says setup failed and shows the end of its log, keeps the log with the run
// (`frognano runs show ID --setup-log`) and opens no pull request.
func TestServiceSetupFailed(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-never.json")
	e.env["FROGNANO_SETUP_NETWORK"] = "none"
	e.gh.PushCommit(e.repo, "main", ".frognano/setup.sh", "echo fetching dependencies\necho 'npm ERR! 404 no-such-package' >&2\nexit 9\n", "setup")
	p := e.start()
	id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
	row := e.waitState(id, svcRunWait, "failed")
	if len(e.model.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(e.model.Requests()))
	}
	svcWait(t, time.Minute, "the final status comment", func() (bool, string) {
		body := e.onlyComment().Body
		return strings.Contains(body, "setup_failed"), body
	})
	c := e.onlyComment()
	for _, want := range []string{"Setup failed", "exited with status 9", "npm ERR! 404 no-such-package", "the model was not called", fmt.Sprintf("frognano runs show %d --setup-log", id)} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, c.Body)
		}
	}
	if row.PRURL != "" {
		t.Errorf("a pull request was opened: %+v", row)
	}
	cli := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, e.getenv, &stdout, &stderr); err != nil {
			t.Fatalf("frognano %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	if log := cli("runs", "show", fmt.Sprint(id), "--setup-log"); !strings.Contains(log, "fetching dependencies\nnpm ERR! 404 no-such-package\n") {
		t.Errorf("--setup-log:\n%s", log)
	}
	facts := cli("runs", "show", fmt.Sprint(id))
	for _, want := range []string{"exit reason   setup_failed", "environment   frognano-sandbox:latest, setup failed", "setup log"} {
		if !strings.Contains(facts, want) {
			t.Errorf("runs show lacks %q:\n%s", want, facts)
		}
	}
	e.waitNoContainers(time.Minute)
}
