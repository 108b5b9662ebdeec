package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestCancelSurvivesAKillAtEveryStep: an unlabel (the queue's Cancel, which runtest's Cancel
// does as it does) while the run's worker works it. The worker is killed when it learns of the
// cancel (before it writes anything), or at each step of its writing of the cancelled status
// comment. The transaction that cancelled the run recorded that comment in the run's outbox
// (run.RecordCancelled) and queued its writing, which the status job does
// (Pipeline.WriteOutbox): the comment ends saying the run was cancelled, never "working".
func TestCancelSurvivesAKillAtEveryStep(t *testing.T) {
	t.Parallel()
	const atCancel = "cancelled"
	for _, step := range []string{"", atCancel, run.StepCommented, run.StepWritten} {
		name := "KilledAt_" + step
		if step == "" {
			name = "NotKilled"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := setupGitHub(t)
			var id int64
			g.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
				// The label comes off while the agent works; the queue cancels the worker's
				// context, which is when a worker killed right then stops.
				g.Cancel(t, id, "issue unlabeled")
				if step == atCancel {
					panic(killed(step))
				}
				return runtest.GoodOutcome(), nil
			})
			g.Config.EndStep = func(_ context.Context, _ int64, s string) {
				if s == step {
					panic(killed(step))
				}
			}
			id = g.Label(t, 7)
			r := g.Work(t, id, 1)
			if step != "" && r.Killed != killed(step) {
				t.Fatalf("the killed attempt = %v, want it killed at %s", r, step)
			}
			if got := g.Row(t, id).State; got != run.StateCancelled {
				t.Fatalf("the run is %s", got)
			}
			g.Config.EndStep = nil
			if n := g.Delivered(id); n != 1 {
				t.Fatalf("%d writings of the outbox queued, want the one the cancel queued", n)
			}
			if _, err := g.WriteOutbox(t, id); err != nil {
				t.Fatalf("writing the outbox: %v", err)
			}
			body := g.onlyComment(t).Body
			if !strings.Contains(body, fmt.Sprintf("🛑 frognano run %d was cancelled.", id)) ||
				!strings.Contains(body, "The label was removed or the issue was closed.") {
				t.Errorf("the status comment of the cancelled run:\n%s", body)
			}
			g.RequireOutboxWritten(t, id)
			if prs := g.gh.PRs(g.hub); len(prs) != 0 {
				t.Errorf("PRs %+v of a cancelled run", prs)
			}
		})
	}
}
