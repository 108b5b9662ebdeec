package queue

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// workStop works a stop request of who on PR 77 the way River would (see work).
func (b *bundle) workStop(t *testing.T, who string) attemptResult {
	t.Helper()
	sw := &stopWorker{pool: b.pool, gh: runtest.GitHubOf(b.repo), log: slog.New(slog.DiscardHandler)}
	args := StopArgs{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", PR: 77, Requester: who}
	return workJob(t, b, args, 1, river.Worker[StopArgs](sw))
}

func (b *bundle) jobState(t *testing.T, id int64) rivertype.JobState {
	t.Helper()
	job, err := b.client.River().JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return job.State
}

// TestStopCancelsAQueuedFollowUp: `@APP stop` from a writer cancels a follow-up that has not
// started yet (a reviewer's, or CI's) so that it never runs, edits its reply when it has one,
// and answers the request; with nothing to stop it says so; a reader's stop changes nothing and
// gets no answer.
func TestStopCancelsAQueuedFollowUp(t *testing.T) {
	t.Parallel()
	t.Run("Reviewer", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := b.acceptFollowUp(t, "reviewer", "@frognano refactor everything")
		b.repo.Perm = "read"
		if r := b.workStop(t, "stranger"); !r.completed() {
			t.Fatal(r)
		}
		if got := b.row(t, res.RunID).State; got != run.StateQueued || len(b.repo.Comments()) != 0 {
			t.Fatalf("after a reader's stop: %s, comments %q", got, b.repo.Comments())
		}
		b.repo.Perm = "maintain"
		if r := b.workStop(t, "reviewer"); !r.completed() {
			t.Fatal(r)
		}
		if got := b.row(t, res.RunID); got.State != run.StateCancelled || !strings.Contains(got.Error, "stopped by reviewer") {
			t.Errorf("run = %+v", got)
		}
		if st := b.jobState(t, res.JobID); st != rivertype.JobStateCancelled {
			t.Errorf("job %s", st)
		}
		if len(b.repo.Comments()) != 1 || !strings.Contains(b.repo.Comments()[0], "@reviewer: frognano stopped run ") {
			t.Errorf("reply %q", b.repo.Comments())
		}
		// Nothing left to stop: the answer says so.
		if r := b.workStop(t, "reviewer"); !r.completed() {
			t.Fatal(r)
		}
		if last := b.repo.Comments()[len(b.repo.Comments())-1]; !strings.Contains(last, "nothing to stop") {
			t.Errorf("second reply %q", last)
		}
		if b.runner.Calls() != 0 {
			t.Error("the stopped follow-up ran")
		}
	})
	t.Run("CIBetweenAttempts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := b.acceptCI(t, ciSHA)
		if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET comment_id = 4242 WHERE id = $1`, res.RunID); err != nil {
			t.Fatal(err)
		}
		if r := b.workStop(t, "reviewer"); !r.completed() {
			t.Fatal(r)
		}
		if got := b.row(t, res.RunID).State; got != run.StateCancelled {
			t.Errorf("CI follow-up %s", got)
		}
		if last := b.repo.LastEdit(); last.ID != 4242 || !strings.Contains(last.Body, "was cancelled") || !strings.Contains(last.Body, "@reviewer asked frognano to stop") {
			t.Errorf("reply edit %+v", last)
		}
	})
	t.Run("ReplyRetried", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := b.acceptFollowUp(t, "reviewer", "@frognano rename x")
		b.repo.FailNext("Comment", runtest.Flaky("commenting"))
		if r := b.workStop(t, "reviewer"); !r.retried() {
			t.Fatalf("a failed reply: %v", r)
		}
		if got := b.row(t, res.RunID).State; got != run.StateCancelled {
			t.Errorf("run %s", got)
		}
	})
}

// TestStopCancelsAFollowUp: `@APP stop` from a reader leaves the follow-up running; from a
// writer it cancels it, and the reply says it was stopped.
func TestStopCancelsAFollowUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	started := make(chan struct{})
	b.runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	c := b.startWorkers(t, time.Second)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()
	res := b.acceptFollowUp(t, "reviewer", "@frognano refactor everything")
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the follow-up never started")
	}
	stop := func(who string) {
		t.Helper()
		if dup, err := c.RequestStop(context.Background(), b.delivery("issue_comment", "created"),
			StopArgs{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", PR: 77, Requester: who}); err != nil || dup {
			t.Fatal(dup, err)
		}
	}
	b.repo.Lock()
	b.repo.Perm = "read"
	b.repo.Unlock()
	stop("stranger")
	for ev := range events { // the stranger's stop job completes and changes nothing
		if ev.Job.Kind == "frognano_stop" {
			break
		}
	}
	if got := b.row(t, res.RunID).State; got != run.StateRunning {
		t.Fatalf("after a reader's stop: %s", got)
	}
	b.repo.Lock()
	b.repo.Perm = "write"
	b.repo.Unlock()
	stop("reviewer")
	if ev := waitJob(t, events, res.JobID); ev.Kind != river.EventKindJobCancelled {
		t.Errorf("follow-up job %s, want cancelled", ev.Kind)
	}
	if got := b.row(t, res.RunID).State; got != run.StateCancelled {
		t.Errorf("state %s", got)
	}
	if body := b.repo.LastEdit().Body; !strings.Contains(body, "asked frognano to stop") {
		t.Errorf("final reply %q", body)
	}
}
