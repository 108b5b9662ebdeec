ALTER TABLE runs DROP COLUMN environment;
ALTER TABLE runs DROP COLUMN setup_log;
