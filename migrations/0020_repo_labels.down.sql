ALTER TABLE runs DROP COLUMN asked_refused;
ALTER TABLE runs DROP COLUMN trigger_label;
DROP TABLE repo_labels;
