-- A request on a pull request that arrives while the pull request's active run has not yet
-- passed its check (the worker has not confirmed that its requester may write, or that it may
-- go ahead at all) waits as a run of its own in state 'waiting': not active (the partial unique
-- index runs_one_active_per_issue leaves it out) and without a River job. When the active run
-- ends, the oldest waiting run of the pull request becomes queued and gets its job, in the
-- transaction that ends the other. checked_at is when the worker found that the run may go
-- ahead; a request arriving after that is counted on the run (extra_requests) as before.
-- Runs made before this migration have none: a request during one of them waits.
-- promoted_at is when a waiting run became queued (NULL: it never waited); when such a run
-- passes its check, the runs still waiting on its pull request are counted on it.
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('waiting', 'queued', 'running', 'succeeded', 'failed', 'cancelled', 'skipped'));
ALTER TABLE runs ADD COLUMN checked_at timestamptz;
ALTER TABLE runs ADD COLUMN promoted_at timestamptz;
CREATE INDEX runs_waiting_by_issue ON runs (repo_id, issue, id) WHERE state = 'waiting';
