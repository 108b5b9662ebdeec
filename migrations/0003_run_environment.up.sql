-- setup_log is the output of the repository's .frognano/setup.sh when this run ran it (the end of
-- it, redacted): kept for `frognano runs show ID --setup-log`, above all when setup failed.
-- environment says which image the run's sandboxes were made from, and how (built, cached).
ALTER TABLE runs ADD COLUMN setup_log text;
ALTER TABLE runs ADD COLUMN environment text;
