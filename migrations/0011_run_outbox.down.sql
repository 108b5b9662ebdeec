DROP INDEX runs_outbox_pending;
ALTER TABLE runs DROP COLUMN outbox;
