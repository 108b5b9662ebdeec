ALTER TABLE runs DROP COLUMN trigger_label;
DROP TABLE repo_labels;
