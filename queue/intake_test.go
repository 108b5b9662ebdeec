package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
)

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAcceptInsertsRunAndJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	job := rivertest.RequireInserted(context.Background(), t, riverpgxv5.New(b.pool), &RunArgs{}, nil)
	if job.Args.RunID != res.RunID || job.ID != res.JobID || job.Queue != QueueName || job.MaxAttempts != MaxAttempts {
		t.Errorf("job = %+v args %+v, want run %d on queue %s", job.JobRow, job.Args, res.RunID, QueueName)
	}
	if got := b.row(t, res.RunID).State; got != run.StateQueued {
		t.Errorf("state = %s", got)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries WHERE run_id = $1 AND outcome = 'queued'`, res.RunID); n != 1 {
		t.Errorf("%d deliveries linked to the run", n)
	}
}

func TestAcceptSameDelivery20TimesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.delivery("issues", "labeled")
	const n = 20
	var wg sync.WaitGroup
	results := make(chan Accepted, n)
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			res, err := b.client.Accept(context.Background(), d, request(7))
			if err != nil {
				errs <- err
				return
			}
			results <- res
		})
	}
	close(start)
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		t.Errorf("Accept: %v", err)
	}
	fresh := 0
	for res := range results {
		if !res.Duplicate {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d non-duplicate answers, want 1", fresh)
	}
	if runs, jobs := b.count(t, `SELECT count(*) FROM runs`), b.count(t, `SELECT count(*) FROM river_job`); runs != 1 || jobs != 1 {
		t.Errorf("%d runs and %d jobs, want 1 and 1", runs, jobs)
	}
}

func TestRedeliveryAfterRiverDeletedItsJobsAndDaysLater(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	d := b.delivery("issues", "labeled")
	first, err := b.client.Accept(ctx, d, request(7))
	if err != nil {
		t.Fatal(err)
	}
	// The run finished and River's cleaner deleted the finished job 24 h later.
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET state = 'succeeded'; DELETE FROM river_job`); err != nil {
		t.Fatal(err)
	}
	for _, age := range []string{"25 hours", "7 days"} {
		if _, err := b.pool.Exec(ctx, `UPDATE deliveries SET received_at = now() - $1::interval`, age); err != nil {
			t.Fatal(err)
		}
		if _, err := deleteOldDeliveries(ctx, b.pool, DefaultDeliveryRetention); err != nil {
			t.Fatal(err)
		}
		res, err := b.client.Accept(ctx, d, request(7))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Duplicate {
			t.Errorf("redelivery %s later was not recognised: %+v", age, res)
		}
	}
	if runs, jobs := b.count(t, `SELECT count(*) FROM runs`), b.count(t, `SELECT count(*) FROM river_job`); runs != 1 || jobs != 0 {
		t.Errorf("%d runs and %d jobs after redeliveries, want 1 and 0 (first run %d)", runs, jobs, first.RunID)
	}
	// Past the retention the delivery is forgotten.
	if _, err := b.pool.Exec(ctx, `UPDATE deliveries SET received_at = now() - interval '11 days'`); err != nil {
		t.Fatal(err)
	}
	if n, err := deleteOldDeliveries(ctx, b.pool, DefaultDeliveryRetention); err != nil || n != 1 {
		t.Errorf("deleteOldDeliveries = %d, %v; want 1", n, err)
	}
}

func TestAcceptWhileActiveStartsNoSecondRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.accept(t, 7)
	res, err := b.client.Accept(context.Background(), b.delivery("issues", "labeled"), request(7))
	if err != nil {
		t.Fatal(err)
	}
	if !res.AlreadyActive || res.RunID != first.RunID || res.JobID != 0 {
		t.Errorf("second label = %+v, want already active run %d", res, first.RunID)
	}
	if runs, jobs := b.count(t, `SELECT count(*) FROM runs`), b.count(t, `SELECT count(*) FROM river_job`); runs != 1 || jobs != 1 {
		t.Errorf("%d runs and %d jobs, want 1 and 1", runs, jobs)
	}
	if n := b.count(t, `SELECT extra_requests FROM runs WHERE id = $1`, first.RunID); n != 1 {
		t.Errorf("extra_requests = %d, want 1", n)
	}
	// Another issue is independent.
	other := b.accept(t, 8)
	if other.RunID == first.RunID {
		t.Error("issue 8 shares issue 7's run")
	}
	// Once the run has ended, a label is a new run (and job): relabelling retries.
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'failed', finished_at = now() WHERE id = $1`, first.RunID); err != nil {
		t.Fatal(err)
	}
	again := b.accept(t, 7)
	if again.AlreadyActive || again.RunID == first.RunID {
		t.Errorf("a label after the run ended = %+v, want a new run", again)
	}
}

func TestCancelQueuedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	res := b.accept(t, 7)
	d := b.delivery("issues", "unlabeled")
	c, err := b.client.Cancel(ctx, d, 42, 7, "label removed")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.RunIDs) != 1 || c.RunIDs[0] != res.RunID {
		t.Errorf("Cancel = %+v, want run %d", c, res.RunID)
	}
	if got := b.row(t, res.RunID).State; got != run.StateCancelled {
		t.Errorf("state = %s, want cancelled", got)
	}
	job, err := b.client.River().JobGet(ctx, res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != rivertype.JobStateCancelled {
		t.Errorf("job state = %s, want cancelled", job.State)
	}
	// The same delivery again is a duplicate; a new one finds nothing.
	if again, err := b.client.Cancel(ctx, d, 42, 7, "label removed"); err != nil || !again.Duplicate {
		t.Errorf("repeat Cancel = %+v, %v; want duplicate", again, err)
	}
	if none, err := b.client.Cancel(ctx, b.delivery("issues", "closed"), 42, 7, "closed"); err != nil || len(none.RunIDs) != 0 {
		t.Errorf("Cancel with nothing active = %+v, %v", none, err)
	}
	// Labeling again after a cancel starts a new run.
	if next := b.accept(t, 7); next.RunID == res.RunID {
		t.Error("a new label after cancel reused the cancelled run")
	}
}

func TestRecordInstallationDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.delivery("installation", "created")
	for i, want := range []bool{false, true} {
		dup, err := b.client.Record(context.Background(), d, "acknowledged")
		if err != nil || dup != want {
			t.Errorf("Record #%d = %v, %v; want duplicate %v", i+1, dup, err, want)
		}
	}
}

func TestAcceptFailsWhenDatabaseIsDown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := b.client.Accept(ctx, b.delivery("issues", "labeled"), request(7)); err == nil {
		t.Fatal("Accept on a closed pool succeeded")
	}
}
