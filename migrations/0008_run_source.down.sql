ALTER TABLE runs DROP COLUMN source_id;
