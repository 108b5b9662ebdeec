-- The older schema has no waiting state: a waiting run, which never started, is cancelled.
UPDATE runs SET state = 'cancelled', finished_at = now(), exit_reason = 'cancelled',
    error = 'the waiting run was cancelled when the database schema was downgraded'
    WHERE state = 'waiting';
DROP INDEX runs_waiting_by_issue;
ALTER TABLE runs DROP COLUMN promoted_at;
ALTER TABLE runs DROP COLUMN checked_at;
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'skipped'));
