DROP INDEX runs_started_by_labeler;
DROP INDEX runs_started_by_repo;
DROP INDEX runs_parked_by_installation;
ALTER TABLE runs DROP COLUMN parked_at;
