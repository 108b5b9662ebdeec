-- A run whose installation has FROGNANO_PER_INSTALLATION runs running when a worker picks it
-- up is parked: it stays queued (still its issue's active run), parked_at says since when,
-- and its River job ends. The transaction that takes a run of the installation out of
-- 'running' (its end, a cancel, a stop, a retry or a shutdown putting it back to queued) wakes
-- the next parked runs, as many as slots are free, by inserting a job for each and clearing
-- parked_at (queue/parked.go); the periodic cleanup wakes those that nothing woke. The
-- order among parked runs is fair between repositories and the people who asked: fewest
-- running first, then the one served longest ago, then the oldest; the started_at indexes
-- answer "served longest ago" without reading the installation's history.
ALTER TABLE runs ADD COLUMN parked_at timestamptz;
CREATE INDEX runs_parked_by_installation ON runs (installation_id, id) WHERE state = 'queued' AND parked_at IS NOT NULL;
CREATE INDEX runs_started_by_repo ON runs (installation_id, repo_id, started_at);
CREATE INDEX runs_started_by_labeler ON runs (installation_id, lower(labeler), started_at);
