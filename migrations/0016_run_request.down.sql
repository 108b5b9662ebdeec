ALTER TABLE runs DROP COLUMN token_id;
ALTER TABLE runs DROP COLUMN asked_model;
ALTER TABLE runs DROP COLUMN asked_attempts;
ALTER TABLE runs DROP COLUMN asked_base;
ALTER TABLE runs DROP COLUMN trigger;
