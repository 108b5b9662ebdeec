package queue

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
)

// A run whose repository's setup script failed ends failed, with no pull request and without
// a retry; the status comment says setup failed and shows the end of its log (the summary the
// runner rendered), and the log and environment are kept with the run (`runs show --setup-log`).
func TestWorkerSetupFailedEndsWithItsLog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return &run.Outcome{
			ExitReason:  runner.ExitSetupFailed,
			Summary:     "## Setup failed\n\nThe repository's setup script failed: exit status 100.\n\n```text\nE: Unable to locate package nosuchpackage\n```\n",
			Report:      "# report",
			Environment: "frognano-sandbox:latest, setup failed",
			SetupLog:    "installing\nE: Unable to locate package nosuchpackage\n",
		}, nil
	})
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateFailed || r.ExitReason != runner.ExitSetupFailed || r.Attempts != 1 {
		t.Errorf("run = %+v, want failed as setup_failed after one attempt", r)
	}
	if len(b.repo.publishes) != 0 {
		t.Error("published after a failed setup")
	}
	body := b.repo.lastEdit().body
	for _, want := range []string{"setup script", "failed", "the model was not called", "E: Unable to locate package nosuchpackage", "--setup-log"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
	kept, err := run.NewStore(b.pool, nil).Run(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if kept.SetupLog != "installing\nE: Unable to locate package nosuchpackage\n" || kept.Environment != "frognano-sandbox:latest, setup failed" {
		t.Errorf("kept setup log %q, environment %q", kept.SetupLog, kept.Environment)
	}
}
