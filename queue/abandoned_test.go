package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestCleanupEndsOnlyAbandonedRuns: the periodic cleanup ends, as failed with an outbox, an
// active run whose job can no longer run it (discarded, cancelled, completed or gone) once
// the job has been over for longer than the grace, whether or not anything waits behind it.
// It leaves alone every run that something will still take up: a parked run (no job on
// purpose: a wake gives it one), a snoozed or retrying one (its job is scheduled or
// retryable), a waiting one, and one whose job ended within the grace.
func TestCleanupEndsOnlyAbandonedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := b.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	long := `now() - interval '1 hour'`
	abandoned := map[string]Accepted{}
	for i, jobState := range []string{"discarded", "cancelled", "completed", "deleted"} {
		res := b.accept(t, 100+i)
		abandoned[jobState] = res
		exec(`UPDATE runs SET state = 'running', started_at = now(), attempts = 3 WHERE id = $1`, res.RunID)
		if jobState == "deleted" { // River's job cleaner deletes ended jobs after a while
			exec(`DELETE FROM river_job WHERE id = $1`, res.JobID)
			continue
		}
		exec(`UPDATE river_job SET state = $2, finalized_at = `+long+` WHERE id = $1`, res.JobID, jobState)
	}
	alive := map[string]Accepted{}
	parked := b.accept(t, 200)
	alive["parked"] = parked
	exec(`UPDATE runs SET parked_at = `+long+` WHERE id = $1`, parked.RunID)
	exec(`UPDATE river_job SET state = 'completed', finalized_at = `+long+` WHERE id = $1`, parked.JobID)
	snoozed := b.accept(t, 201)
	alive["snoozed"] = snoozed
	exec(`UPDATE river_job SET state = 'scheduled', scheduled_at = now() + interval '1 minute' WHERE id = $1`, snoozed.JobID)
	retrying := b.accept(t, 202)
	alive["retrying"] = retrying
	exec(`UPDATE runs SET state = 'running', started_at = now(), attempts = 1 WHERE id = $1`, retrying.RunID)
	exec(`UPDATE river_job SET state = 'retryable', attempt = 1, scheduled_at = now() + interval '1 minute' WHERE id = $1`, retrying.JobID)
	recent := b.accept(t, 203)
	alive["ended within the grace"] = recent
	exec(`UPDATE runs SET state = 'running', started_at = now(), attempts = 3 WHERE id = $1`, recent.RunID)
	exec(`UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, recent.JobID)
	active := b.acceptFollowUp(t, "maintainer", "@frognano rename x")
	alive["active with a waiting run"] = active
	waiting := b.acceptFollowUp(t, "other-maintainer", "@frognano rename y")
	alive["waiting"] = waiting
	before := map[string]string{}
	for name, res := range alive {
		before[name] = b.row(t, res.RunID).State
	}

	cw := &cleanupWorker{pool: b.pool, retention: DefaultDeliveryRetention, log: b.worker.cfg.Logger, label: "frognano"}
	if r := workJob(t, b, cleanupArgs{}, 1, river.Worker[cleanupArgs](cw)); !r.completed() {
		t.Fatal(r)
	}
	g := &ghBundle{bundle: b}
	for name, res := range abandoned {
		if got := b.row(t, res.RunID); got.State != run.StateFailed || !strings.Contains(got.Error, "job") {
			t.Errorf("the run whose job was %s: %+v; want failed, saying its job ended", name, got)
		}
		if jobs := g.statusJobs(t, res.RunID); len(jobs) != 1 || !jobs[0].Outbox {
			t.Errorf("the run whose job was %s: status jobs %+v, want its outbox's", name, jobs)
		}
	}
	for name, res := range alive {
		if got := b.row(t, res.RunID).State; got != before[name] {
			t.Errorf("the %s run went from %s to %s", name, before[name], got)
		}
		if jobs := g.statusJobs(t, res.RunID); len(jobs) != 0 {
			t.Errorf("the %s run: status jobs %+v", name, jobs)
		}
	}
	if b.row(t, waiting.RunID).State != run.StateWaiting {
		t.Error("the waiting run is no longer waiting")
	}

	// The outbox of a run that never passed its check, and so never said anything on the
	// issue, takes the label off and says nothing: it is not known that its labeller may
	// start runs.
	sw := river.Worker[statusArgs](&statusWorker{pool: b.pool, gh: runtest.GitHubOf(b.repo), log: b.worker.cfg.Logger})
	if r := workJob(t, b, statusArgs{RunID: abandoned["discarded"].RunID, Outbox: true}, 1, sw); !r.completed() {
		t.Fatal(r)
	}
	if len(b.repo.Comments()) != 0 || len(b.repo.Edits()) != 0 || fmt.Sprint(b.repo.RemovedLabels()) != "[frognano]" {
		t.Errorf("comments %q, edits %+v, labels removed %v; want only the label removed", b.repo.Comments(), b.repo.Edits(), b.repo.RemovedLabels())
	}
}
