-- The outbox of a run's end: what the run's end must still write to GitHub (run/outbox.go),
-- set in the transaction that records the run's outcome and cleared once it is written. While
-- it is set, whichever process comes next writes it: the worker that ended the run at once,
-- else the status job queued in the same transaction, a retry of the run's own job, or the
-- periodic cleanup (queue/outbox.go). NULL: nothing is left to write.
ALTER TABLE runs ADD COLUMN outbox jsonb;
CREATE INDEX runs_outbox_pending ON runs (finished_at) WHERE outbox IS NOT NULL;
