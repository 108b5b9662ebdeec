ALTER TABLE runs DROP COLUMN ci_sha;
UPDATE runs SET kind = 'followup' WHERE kind = 'ci';
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('issue', 'followup'));
