package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// The Store's writes of a run's end: the ends themselves (finish, cancel, End, and the
// cleanup's EndAbandoned, ended.go), each of which promotes the run waiting behind it in the
// same transaction, and the run's outbox (outbox.go): recorded with the end, or after it by a
// cancel, and cleared once written.

// Ended is the run a transaction of the Store has just ended, as its Promote sees it.
type Ended struct {
	ID, InstallationID, RepoID int64
	Issue                      int // the issue, or the pull request of a follow-up
}

// finish moves a running run to a final state with what its end must still write to GitHub
// (o, nil: nothing) and, in the same transaction, promotes the oldest run waiting on its pull
// request (Promote), queues the writing of o (Deliver) and hands what the run published (pub,
// nil: nothing) to the Published hook. It reports false when the run was no longer running
// (for example cancelled by an unlabel meanwhile).
func (s *Store) finish(ctx context.Context, id int64, state, exitReason, errText, prURL string, prNumber int, o *outbox, pub *Publication) (bool, error) {
	return s.end(ctx, fmt.Sprintf("finishing run %d as %s", id, state), o, pub, `UPDATE runs SET state = $2, finished_at = now(),
			exit_reason = coalesce(nullif($3, ''), exit_reason), error = nullif($4, ''),
			pr_url = nullif($5, ''), pr_number = nullif($6, 0), outbox = $7
		WHERE id = $1 AND state = 'running' RETURNING id, installation_id, repo_id, issue`,
		id, state, CleanText(exitReason), CleanText(githubapp.RedactRun(errText)), prURL, prNumber, o.value())
}

// End moves running run id to state (a final state) with nothing else recorded and nothing
// left to write to GitHub, and promotes the oldest run waiting on its pull request (Promote),
// in one transaction, as every end does. It reports false when the run was no longer running.
// The pipeline's ends record more (finish, cancel).
func (s *Store) End(ctx context.Context, id int64, state string) (bool, error) {
	return s.end(ctx, fmt.Sprintf("ending run %d as %s", id, state), nil, nil, `UPDATE runs SET state = $2, finished_at = now()
		WHERE id = $1 AND state = 'running' RETURNING id, installation_id, repo_id, issue`, id, state)
}

// end runs update, which must end an active run and return its id, installation_id, repo_id
// and issue (no row: the run was not active), and promotes the oldest run waiting on its pull
// request (Promote), in one transaction; Deliver queues the writing of the outbox o the update
// recorded (nil: none) in the same transaction. It reports whether update ended the run.
// Every end of a run goes through it (finish, cancel, End) or promotes as it does
// (EndAbandoned: the queue's cleanup of runs whose job died, queue/waiting.go).
func (s *Store) end(ctx context.Context, what string, o *outbox, pub *Publication, update string, args ...any) (bool, error) {
	ended := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ended = false
		var e Ended
		err := tx.QueryRow(ctx, update, args...).Scan(&e.ID, &e.InstallationID, &e.RepoID, &e.Issue)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ended = true
		if err := s.afterEnd(ctx, tx, e, o != nil); err != nil {
			return err
		}
		if pub != nil && s.published != nil {
			return s.recordPublication(ctx, tx, *pub)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return ended, nil
}

// recordPublication hands what the run published to the Published hook in a savepoint of tx:
// a transient failure (the database went away) rolls the whole end back, so that the run's
// retry publishes again (Publish is idempotent) and records both; any other failure is logged
// and only its own writes are rolled back, since a pull request that GitHub shows must never
// make its run fail.
func (s *Store) recordPublication(ctx context.Context, tx pgx.Tx, p Publication) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if err := s.published(ctx, sp, p); err != nil {
		if fault.IsTransient(err) {
			return err
		}
		if rerr := sp.Rollback(ctx); rerr != nil {
			return rerr
		}
		logging.FromContext(ctx).ErrorContext(ctx, "recording the pull request the run published to; what becomes of it is not followed",
			logging.RunID(p.RunID), "pull_request", p.Number, logging.Err(err))
		return nil
	}
	return sp.Commit(ctx)
}

// afterEnd is what follows every end in its transaction tx: the promotion of the run waiting
// behind e (Promote) and, with deliver (the end recorded an outbox), the job that writes the
// outbox (Deliver).
func (s *Store) afterEnd(ctx context.Context, tx pgx.Tx, e Ended, deliver bool) error {
	if s.promote == nil {
		return errors.New("ending a run: this Store cannot promote the run waiting behind it")
	}
	if _, err := s.promote(ctx, tx, s, e); err != nil || !deliver || s.deliver == nil {
		return err
	}
	return s.deliver(ctx, tx, e.ID)
}

// cancel marks an active run cancelled (used when River cancelled the job
// before the webhook transaction's update was seen, or by the worker) and promotes the run
// waiting next on its pull request, like finish. It reports false when the run was no longer
// active (the queue cancelled it).
func (s *Store) cancel(ctx context.Context, id int64, o *outbox) (bool, error) {
	return s.end(ctx, "cancelling run", o, nil, `UPDATE runs SET state = 'cancelled', finished_at = now(),
			exit_reason = coalesce(exit_reason, 'cancelled'), outbox = $2
		WHERE id = $1 AND state IN ('queued', 'running') RETURNING id, installation_id, repo_id, issue`, id, o.value())
}

// abandon ends active run id, whose row tx holds, as failed with AbandonedError and the outbox
// o (EndAbandoned).
func (s *Store) abandon(ctx context.Context, tx pgx.Tx, id int64, o *outbox) (Ended, error) {
	e := Ended{ID: id}
	if err := tx.QueryRow(ctx, `UPDATE runs SET state = 'failed', finished_at = now(), error = $2, outbox = $3 WHERE id = $1
		RETURNING installation_id, repo_id, issue`, id, AbandonedError, o.value()).Scan(&e.InstallationID, &e.RepoID, &e.Issue); err != nil {
		return Ended{}, fmt.Errorf("ending run: %w", err)
	}
	return e, nil
}

// setOutbox records o as what the end of run id, which tx has just ended, must still write to
// GitHub (RecordCancelled).
func (s *Store) setOutbox(ctx context.Context, tx pgx.Tx, id int64, o *outbox) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET outbox = $2 WHERE id = $1`, id, o.value()); err != nil {
		return fmt.Errorf("recording the outbox of cancelled run %d: %w", id, err)
	}
	return nil
}

// clearOutbox records, in tx, that the outbox of run id is written (writeOutbox).
func (s *Store) clearOutbox(ctx context.Context, tx pgx.Tx, id int64) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET outbox = NULL WHERE id = $1`, id); err != nil {
		return fmt.Errorf("clearing the run's outbox: %w", err)
	}
	return nil
}

// recordPosted records, in tx, comment as the status comment of run id, which had none: the
// outbox's writer posted it, or found it by its marker (writeStatus).
func (s *Store) recordPosted(ctx context.Context, tx pgx.Tx, id, comment int64) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET comment_id = $2 WHERE id = $1 AND comment_id IS NULL`, id, comment); err != nil {
		return fmt.Errorf("recording the status comment: %w", err)
	}
	return nil
}
