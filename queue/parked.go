package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
)

// This file owns the parked runs (migration 0012): the runs that found their installation at
// FROGNANO_PER_INSTALLATION running runs. The rules:
//
//   - run.Store's start parks such a run (it stays queued, its issue's active run, with
//     parked_at set) and the worker ends its job: no job waits, nothing polls.
//   - wakeParked: every transaction that takes a run of an installation out of 'running' (an
//     end of run.Store, through its Promote; a cancel, a stop; a retry or a shutdown that puts
//     the run back to queued, in a transaction of its own right after) wakes the installation's
//     next parked runs, as many as it has free slots: each gets a new job, available at once
//     (River's insert notifies the workers of every process on the database), and parked_at is
//     cleared (run.Store.Wake). The next is chosen fairly: the fewest runs of its repository or of its requester
//     running (or woken in the same transaction), then the requester served longest ago (the
//     latest start of a run of theirs; never first), then the repository served longest ago,
//     then the oldest: people take turns, a person's repositories take turns, and one
//     repository or person cannot fill the installation's slots while another waits.
//   - A wake counts as taken the slots of the runs running and of those about to start (queued,
//     not parked, with their job available: a fresh run or one woken already). A fresh run
//     that finds a slot free takes it: the schedule never leaves a slot idle for fairness.
//   - The limit is held where it is taken, in start, under the installation's advisory lock: a
//     woken run that finds no slot (a fresh run's job was taken between the wake's count and
//     its start, or two ends woke for one slot) parks again, and a job River rescues from a
//     dead worker counts like any other.
//   - Lock order: a run's row first, the installation's advisory lock after it (start locks
//     the run it starts; an end, a cancel or a stop holds the rows it changed). Under the
//     advisory lock no transaction waits for a run's row: the wake skips a parked run another
//     transaction holds (a cancel of that run), so the two orders never meet in a deadlock.
//   - wakeStranded, in the periodic cleanup, wakes the parked runs of an installation with a
//     free slot that nothing woke (a process died between a retry's requeue and its wake, an
//     operator's UPDATE), and endDead frees the slot of a running run whose job ended without
//     ending it.
//   - A parked run's old job may outlive its park (the worker died before River recorded the
//     job's end): the wake cancels it, so River's rescuer cancels it instead of running it
//     again, and reclaim takes back only a run's current job.

// lockInstallation takes installation id's advisory lock in tx, the lock run.Store's start
// counts and starts under.
func lockInstallation(ctx context.Context, tx pgx.Tx, id int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('frognano.installation.' || $1::bigint::text, 0))`, id); err != nil {
		return fmt.Errorf("locking installation %d: %w", id, err)
	}
	return nil
}

// nextParked picks the installation's next parked run (this file's order), locking its row;
// woken are the runs this transaction woke already. ErrNoRows: none is parked (or every one is
// held by another transaction).
const nextParked = `SELECT p.id, p.installation_id, p.owner, p.repo, p.issue, coalesce(p.job_id, 0)
	FROM runs p
	WHERE p.installation_id = $1 AND p.state = 'queued' AND p.parked_at IS NOT NULL
	ORDER BY
		(SELECT count(*) FROM runs a WHERE a.installation_id = $1 AND (a.state = 'running' OR a.id = ANY($2))
			AND (a.repo_id = p.repo_id OR lower(a.labeler) = lower(p.labeler))),
		(SELECT max(a.started_at) FROM runs a WHERE a.installation_id = $1 AND lower(a.labeler) = lower(p.labeler)) NULLS FIRST,
		(SELECT max(a.started_at) FROM runs a WHERE a.installation_id = $1 AND a.repo_id = p.repo_id) NULLS FIRST,
		p.id
	LIMIT 1
	FOR UPDATE OF p SKIP LOCKED`

// wakeParked wakes, in tx, the next parked runs of installation id, as many as it has slots
// free under limit, and returns them. tx has just taken a run of the installation out of
// 'running' (or found a slot free); it takes the installation's advisory lock. The runs are
// written through runs, their jobs inserted with rc.
func wakeParked(ctx context.Context, tx pgx.Tx, runs *run.Store, rc *river.Client[pgx.Tx], id int64, limit int) ([]int64, error) {
	if err := lockInstallation(ctx, tx, id); err != nil {
		return nil, err
	}
	// The slots taken: the runs running, and those about to start (queued, not parked, their
	// job available: a fresh run, or one woken already), which would leave a woken run none.
	var running int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM runs r WHERE r.installation_id = $1 AND (r.state = 'running'
			OR r.state = 'queued' AND r.parked_at IS NULL AND EXISTS (SELECT 1 FROM river_job j WHERE j.id = r.job_id AND j.state = 'available'))`,
		id).Scan(&running); err != nil {
		return nil, fmt.Errorf("counting the running runs of installation %d: %w", id, err)
	}
	woken := []int64{}
	for len(woken) < limit-running {
		var args RunArgs
		var oldJob int64
		err := tx.QueryRow(ctx, nextParked, id, woken).Scan(&args.RunID, &args.InstallationID, &args.Owner, &args.Repo, &args.Issue, &oldJob)
		if errors.Is(err, pgx.ErrNoRows) {
			break
		}
		if err != nil {
			return woken, fmt.Errorf("choosing the next parked run of installation %d: %w", id, err)
		}
		if err := wakeOne(ctx, tx, runs, rc, args, oldJob); err != nil {
			return woken, err
		}
		woken = append(woken, args.RunID)
	}
	return woken, nil
}

// wakeOne gives parked run args.RunID a new job, available at once, carrying the attempts its
// earlier jobs spent (the park itself spends none, as River's snooze did not), and cancels
// its old job, which must never work it again (run.Store.Wake).
func wakeOne(ctx context.Context, tx pgx.Tx, runs *run.Store, rc *river.Client[pgx.Tx], args RunArgs, oldJob int64) error {
	if rc == nil {
		return errors.New("waking a parked run: no River client to insert its job")
	}
	if oldJob != 0 {
		// River's job cleaner may have deleted it: then nothing was spent that we know of.
		if err := tx.QueryRow(ctx, `SELECT greatest(attempt - 1, 0) + coalesce((args->>'spent')::int, 0) FROM river_job WHERE id = $1`,
			oldJob).Scan(&args.Spent); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("reading the attempts of parked run %d: %w", args.RunID, err)
		}
		if _, err := rc.JobCancelTx(ctx, tx, oldJob); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("cancelling the old job of parked run %d: %w", args.RunID, err)
		}
	}
	args.Spent = min(args.Spent, MaxAttempts-1)
	ins, err := rc.InsertTx(ctx, tx, args, &river.InsertOpts{MaxAttempts: MaxAttempts - args.Spent})
	if err != nil {
		return fmt.Errorf("inserting the job of parked run %d: %w", args.RunID, err)
	}
	return runs.Wake(ctx, tx, args.RunID, ins.Job.ID)
}

// wakeAfter wakes the parked runs of installation id in a transaction of its own: for a run
// put back to queued (a retry, a shutdown), whose transaction is the run package's.
func wakeAfter(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], id int64, limit int) ([]int64, error) {
	var woken []int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		woken, err = wakeParked(ctx, tx, store(pool), rc, id, limit)
		return err
	})
	return woken, err
}

// wakeStranded wakes the parked runs of every installation that has a slot free, and returns
// how many it woke: the cleanup's safety net for a wake that never came.
func wakeStranded(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], limit int) (int, error) {
	rows, err := pool.Query(ctx, `SELECT DISTINCT installation_id FROM runs WHERE state = 'queued' AND parked_at IS NOT NULL`)
	if err != nil {
		return 0, fmt.Errorf("looking for parked runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("looking for parked runs: %w", err)
	}
	n := 0
	for _, id := range ids {
		woken, err := wakeAfter(ctx, pool, rc, id, limit)
		n += len(woken)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// limitKey carries the process's PerInstallationLimit in a job's context, as River carries its
// client there: the ends a job makes (run.Store's Promote) wake parked runs under it.
type limitKey struct{}

// withLimit is the River middleware that puts limit in every job's context.
func withLimit(limit int) rivertype.Middleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
		return doInner(context.WithValue(ctx, limitKey{}, limit))
	})
}

// limitFrom is the limit withLimit put in ctx; 0 when none (a job worked outside the client:
// its ends wake nothing, and the cleanup's wakeStranded wakes what they would have).
func limitFrom(ctx context.Context) int {
	n, _ := ctx.Value(limitKey{}).(int)
	return n
}
