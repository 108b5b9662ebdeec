ALTER TABLE runs DROP COLUMN check_run;
