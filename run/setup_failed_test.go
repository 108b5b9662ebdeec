package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

// A run whose repository's setup script failed ends failed, with no pull request and without
// a retry; the status comment says setup failed and shows the end of its log (the summary the
// runner rendered), and the log and environment are kept with the run (`runs show --setup-log`).
func TestSetupFailedEndsWithItsLog(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return &run.Outcome{
			ExitReason:  runner.ExitSetupFailed,
			Summary:     "## Setup failed\n\nThe repository's setup script failed: exit status 100.\n\n```text\nE: Unable to locate package nosuchpackage\n```\n",
			Report:      "# report",
			Environment: "frognano-sandbox:latest, setup failed",
			SetupLog:    "installing\nE: Unable to locate package nosuchpackage\n",
		}, nil
	})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	r := p.Row(t, id)
	if r.State != run.StateFailed || r.ExitReason != runner.ExitSetupFailed || r.Attempts != 1 {
		t.Errorf("run = %+v, want failed as setup_failed after one attempt", r)
	}
	if len(p.Repo.Publishes()) != 0 {
		t.Error("published after a failed setup")
	}
	body := p.Repo.LastEdit().Body
	for _, want := range []string{"setup script", "failed", "the model was not called", "E: Unable to locate package nosuchpackage", "--setup-log"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
	kept, err := run.NewStore(p.Pool, nil).Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if kept.SetupLog != "installing\nE: Unable to locate package nosuchpackage\n" || kept.Environment != "frognano-sandbox:latest, setup failed" {
		t.Errorf("kept setup log %q, environment %q", kept.SetupLog, kept.Environment)
	}
}
