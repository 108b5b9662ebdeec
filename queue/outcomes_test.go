package queue

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/outcome"
)

// TestPullRequestOutcomes: a run the queue's worker ends as succeeded leaves its pull request
// followed (the Published hook); a pull_request event on it is recorded with its delivery and,
// for a merge, the measure job, in one transaction; the same delivery again changes nothing; an
// event on a pull request frognano does not follow stores nothing; the measure job, worked
// through River, records a merge as frognano left it as 0 lines of people's.
func TestPullRequestOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	store := outcome.NewStore(b.pool)
	b.worker.cfg.Outcomes = store
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("run: %v", r)
	}
	row, err := store.Get(ctx, 42, 77)
	if err != nil {
		t.Fatalf("the run's pull request is not followed: %v", err)
	}
	if row.FirstRunID != res.RunID || !row.Ours || row.Issue != 7 || row.BotHeadSHA == "" || row.State != outcome.StateOpen {
		t.Fatalf("row = %+v", row)
	}

	deliveries := b.count(t, `SELECT count(*) FROM deliveries`)
	other, err := b.client.PullRequestEvent(ctx, b.delivery("pull_request", "closed"), outcome.Event{Action: "closed", RepoID: 42, Number: 78, At: time.Now()})
	if err != nil || !other.Ignored || b.count(t, `SELECT count(*) FROM deliveries`) != deliveries {
		t.Fatalf("an event on another pull request = %+v, %v; deliveries %d -> %d", other, err, deliveries, b.count(t, `SELECT count(*) FROM deliveries`))
	}
	d := b.delivery("pull_request", "closed")
	merge := outcome.Event{Action: "closed", RepoID: 42, Number: 77, Sender: "dave", Merged: true, MergedBy: "dave", At: time.Now(), HeadSHA: row.BotHeadSHA}
	got, err := b.client.PullRequestEvent(ctx, d, merge)
	if err != nil || got.Ignored || got.Duplicate || !got.Changed || !got.Measure {
		t.Fatalf("the merge = %+v, %v", got, err)
	}
	if n := b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1 AND queue = $2`, measureArgs{}.Kind(), SmallQueueName); n != 1 {
		t.Errorf("%d measure jobs on the small queue, want 1", n)
	}
	if again, err := b.client.PullRequestEvent(ctx, d, merge); err != nil || !again.Duplicate || b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1`, measureArgs{}.Kind()) != 1 {
		t.Errorf("the same delivery again = %+v, %v", again, err)
	}
	rec := outcome.NewReconciler(store, nil, outcome.Config{}) // a merge as frognano left it asks GitHub nothing
	if r := workJob(t, b, measureArgs{RepoID: 42, Number: 77}, 1, river.Worker[measureArgs](&measureWorker{rec: rec})); !r.completed() {
		t.Fatalf("measure: %v", r)
	}
	if row, err = store.Get(ctx, 42, 77); err != nil || row.State != outcome.StateMerged || row.PeopleLines == nil || *row.PeopleLines != 0 {
		t.Errorf("after the measure: %+v, %v", row, err)
	}
}
