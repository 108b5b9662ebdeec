package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
)

// This file owns the waiting runs of a pull request (migration 0009). A pull request has at
// most one active (queued or running) run. Its worker checks the run's requester (only writers
// may reach the model) or, for CI, whether the run may go ahead at all, when it picks the run
// up; until then the run may well be refused. A request that arrives meanwhile must not be
// counted on a run that may be refused, or a reader's request would swallow a writer's: it
// waits as a run of its own, in state waiting, without a River job. The rules:
//
//   - Accept: a follow-up request on a pull request whose active run has not passed its check
//     waits. A person's further request is counted on the run they already have waiting
//     (extra_requests); one that comes when MaxWaitingRuns runs already wait, or after the
//     active run has passed its check, is counted on the active run as before.
//   - promoteWaiting: whatever ends an active run (run.Store's ends, through its Promote: the
//     pipeline's, and run.Store.EndAbandoned: endDead's) makes the oldest waiting run of its
//     pull request queued and inserts its job, in the same transaction.
//   - run.Store's pass: when a run passes its check, checked_at records it. When that run is one that
//     waited (promoted_at), the runs still waiting on its pull request are folded into it
//     (skipped, counted in its extra_requests with the requests counted on them), as requests
//     during an active run always were: the requests that came while one run was being checked
//     get one run after it, not one each. A run that never waited leaves them waiting: they
//     came before anyone knew it would go ahead, and they get their run once it ends.
//   - A stop request, an unlabel or close (Cancel) and an uninstall (CancelInstallation)
//     cancel the waiting runs together with the active ones.
//
// Row locks are always taken on the active run first and on the waiting runs after it, so
// that these transactions serialise on the active run and never deadlock. The runs are
// written through the run's Store (run/store_queue.go), in these transactions.

// promoteWaiting makes the oldest waiting run of pull request (repoID, issue) queued and
// inserts its job, in tx, which has just ended the pull request's active run. It returns the
// promoted run's id, 0 when none waited. The runs are written through runs, the job inserted
// with rc.
func promoteWaiting(ctx context.Context, tx pgx.Tx, runs *run.Store, rc *river.Client[pgx.Tx], repoID int64, issue int) (int64, error) {
	r, err := runs.PromoteWaiting(ctx, tx, repoID, issue)
	if err != nil || r.ID == 0 {
		return 0, err
	}
	if rc == nil {
		return 0, errors.New("promoting a waiting run: no River client to insert its job")
	}
	ins, err := rc.InsertTx(ctx, tx, RunArgs{RunID: r.ID, InstallationID: r.InstallationID, Owner: r.Owner, Repo: r.Repo, Issue: r.Issue}, nil)
	if err != nil {
		return 0, fmt.Errorf("inserting the job of promoted run %d: %w", r.ID, err)
	}
	if err := runs.LinkJob(ctx, tx, r.ID, ins.Job.ID); err != nil {
		return 0, err
	}
	return r.ID, nil
}

// promoteAndWake is every end's Promote: promoteWaiting, then, with a limit, the wake of the
// ended run's installation's parked runs (parked.go), in tx.
func promoteAndWake(ctx context.Context, tx pgx.Tx, runs *run.Store, rc *river.Client[pgx.Tx], limit int, ended run.Ended) (int64, error) {
	id, err := promoteWaiting(ctx, tx, runs, rc, ended.RepoID, ended.Issue)
	if err != nil || limit <= 0 {
		return id, err
	}
	_, err = wakeParked(ctx, tx, runs, rc, ended.InstallationID, limit)
	return id, err
}

// waitOrCount is Accept for a request whose pull request or issue already has an active run:
// it waits as a run of its own (see this file's rules) or is counted on the active run.
// It reports the run that now holds the request.
func waitOrCount(ctx context.Context, tx pgx.Tx, runs *run.Store, d Delivery, req RunRequest, kind string) (Accepted, error) {
	var res Accepted
	var active, activeSource int64
	var checked bool
	var err error
	// A run that ends while this statement waits for its row lock no longer matches, and the
	// run it promoted in the same transaction was not in this statement's snapshot: the second
	// try, with a new snapshot, finds that one.
	for try := 0; try < 2; try++ {
		err = tx.QueryRow(ctx, `SELECT id, checked_at IS NOT NULL, coalesce(source_id, 0) FROM runs
			WHERE repo_id = $1 AND issue = $2 AND state IN ('queued', 'running') FOR UPDATE`,
			req.RepoID, req.Issue).Scan(&active, &checked, &activeSource)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// The active run ended between the two statements: let the sender redeliver rather
		// than guess.
		return res, fault.Transient(fmt.Errorf("noting a request on the active run: %w", err))
	}
	if err != nil {
		return res, fmt.Errorf("locking the active run: %w", err)
	}
	sameSource := req.SourceID != 0 && req.SourceID == activeSource
	if !sameSource && !checked && kind != run.KindIssue {
		// A request from the source a waiting run already reads (a line comment of the review
		// it answers) is part of that run, not one more. A person's further request is
		// counted on the run they already have waiting, so that one person (a reader's flood)
		// cannot take every waiting place and leave a writer's request to be counted on a run
		// that is refused. CI is not a person: each of its failures waits on its own.
		var id, mine int64
		var waiting int
		err := tx.QueryRow(ctx, `SELECT coalesce(max(id) FILTER (WHERE $3::bigint <> 0 AND source_id = $3::bigint), 0),
				coalesce(min(id) FILTER (WHERE $5 AND kind = 'followup' AND lower(labeler) = lower($4)), 0), count(*)
			FROM runs WHERE repo_id = $1 AND issue = $2 AND state = 'waiting'`,
			req.RepoID, req.Issue, req.SourceID, req.Labeler, kind == run.KindFollowUp).Scan(&id, &mine, &waiting)
		if err != nil {
			return res, fmt.Errorf("counting waiting runs: %w", err)
		}
		if id == 0 && mine != 0 {
			if err := runs.CountRequests(ctx, tx, mine, 1); err != nil {
				return res, fmt.Errorf("noting a request on the requester's waiting run: %w", err)
			}
			id = mine
		}
		if id == 0 && waiting < run.MaxWaitingRuns {
			n := newRun(d, req)
			n.Kind = kind
			if id, err = runs.AddWaiting(ctx, tx, n); err != nil {
				return res, err
			}
		}
		if id != 0 {
			res.Waiting, res.RunID = true, id
			return res, setDeliveryOutcome(ctx, tx, d, id, "waiting")
		}
	}
	// A request from the source the active run already reads is part of that run, not one more.
	inc := 1
	if sameSource {
		inc = 0
	}
	if err := runs.CountRequests(ctx, tx, active, inc); err != nil {
		return res, fmt.Errorf("noting a request on the active run: %w", err)
	}
	res.AlreadyActive, res.RunID = true, active
	return res, setDeliveryOutcome(ctx, tx, d, active, "already_active")
}

// promoteStranded promotes the oldest waiting run of each pull request that has runs waiting
// but no active run, and returns how many it promoted (endDead's ends included); with the
// limit the context carries (limitFrom), it also wakes the parked runs of each installation
// with a slot free (wakeStranded), counted in the same number. Whatever ends an active run
// promotes the next one (and wakes) in the same transaction; this is the periodic safety net
// for an active run ended by something that does not (an older frognano during an upgrade, an
// operator's UPDATE), for a wake that a dead process never made, and for a run that nothing
// will end (endDead).
func promoteStranded(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], ab abandon) (int, error) {
	n, err := promoteStrandedWaiting(ctx, pool, rc, ab)
	if limit := limitFrom(ctx); err == nil && limit > 0 {
		var woken int
		woken, err = wakeStranded(ctx, pool, rc, limit)
		n += woken
	}
	return n, err
}

// promoteStrandedWaiting is promoteStranded's part for the waiting runs.
func promoteStrandedWaiting(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], ab abandon) (int, error) {
	n, err := endDead(ctx, pool, rc, ab)
	if err != nil {
		return n, err
	}
	rows, err := pool.Query(ctx, `SELECT DISTINCT repo_id, issue FROM runs w WHERE state = 'waiting'
		AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.repo_id = w.repo_id AND a.issue = w.issue AND a.state IN ('queued', 'running'))`)
	if err != nil {
		return n, fmt.Errorf("looking for stranded waiting runs: %w", err)
	}
	type pr struct {
		repoID int64
		issue  int
	}
	prs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pr, error) {
		var p pr
		return p, r.Scan(&p.repoID, &p.issue)
	})
	if err != nil {
		return n, fmt.Errorf("looking for stranded waiting runs: %w", err)
	}
	for _, p := range prs {
		var id int64
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			id, err = promoteWaiting(ctx, tx, store(pool), rc, p.repoID, p.issue)
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" /* unique_violation */ {
			continue // a request made a run active meanwhile: its end promotes the next
		}
		if err != nil {
			return n, err
		}
		if id != 0 {
			n++
		}
	}
	return n, nil
}

// abandonGrace is how long a run's job must have been over before the cleanup takes the run
// as abandoned (deadJob): the job's end and the run's are separate writes, and an operator
// who retries a job from River's UI does it in this time.
const abandonGrace = time.Minute

// deadJob is true of an active run (alias r) whose River job has ended (completed, cancelled,
// discarded) more than abandonGrace ago, or is gone: no worker will take the run again,
// whatever its row says. A parked run's job has ended by design: a wake gives it its next
// (parked.go); a snoozed or retrying run's job is scheduled or retryable, not ended; a waiting
// run is not active and has no job (this file).
var deadJob = fmt.Sprintf(`r.parked_at IS NULL AND r.job_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM river_job j
	WHERE j.id = r.job_id AND (j.state NOT IN ('completed', 'cancelled', 'discarded') OR j.finalized_at > now() - interval '%d seconds'))`,
	int(abandonGrace.Seconds()))

// abandon is what the cleanup's end of an abandoned run needs of the queue's Config.
type abandon struct {
	label     string // Config.Label: an issue run's label comes off, so that adding it again retries
	publicURL string // Config.PublicURL: the status comment links the run's page
}

// endDead ends, as failed, each active run whose job has ended without ending it (deadJob:
// River's rescuer discarded the job after a crash on its last attempt, River cancelled it, the
// worker's own end failed before it cancelled the job, or the job is gone), whether or not
// anything waits behind it: nothing else would ever end it, its status comment would say it
// works forever, and it would hold its installation's slot. River's rescuer, which this
// follows, fails the jobs of dead workers; this ends the runs those jobs leave behind. Each end
// records the outbox that makes GitHub say so (run.Store.EndAbandoned) and queues its status job,
// due at once (nobody else writes it), and promotes the oldest waiting run and wakes the parked
// ones in the same transaction (promoteAndWake with the limit the context carries). It returns
// how many runs it ended.
func endDead(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], ab abandon) (int, error) {
	s := run.NewStore(pool, func(ctx context.Context, tx pgx.Tx, runs *run.Store, ended run.Ended) (int64, error) {
		return promoteAndWake(ctx, tx, runs, rc, limitFrom(ctx), ended)
	}).WithDeliver(func(ctx context.Context, tx pgx.Tx, runID int64) error {
		if _, err := rc.InsertTx(ctx, tx, statusArgs{RunID: runID, Outbox: true}, nil); err != nil {
			return fmt.Errorf("queueing the writing of run %d's end to GitHub: %w", runID, err)
		}
		return nil
	})
	rows, err := pool.Query(ctx, `SELECT r.id FROM runs r WHERE r.state IN ('queued', 'running') AND `+deadJob+` ORDER BY r.id`)
	if err != nil {
		return 0, fmt.Errorf("looking for active runs whose job ended: %w", err)
	}
	dead, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("looking for active runs whose job ended: %w", err)
	}
	n := 0
	for _, id := range dead {
		// The job is looked at again under the run's row lock: a wake or an operator may have
		// given it a new one.
		ended, err := s.EndAbandoned(ctx, id, deadJob, ab.label, ab.publicURL)
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}
