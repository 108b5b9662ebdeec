ALTER TABLE run_audit DROP COLUMN detail;
ALTER TABLE run_audit DROP COLUMN outcome;
