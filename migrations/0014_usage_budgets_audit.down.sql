DROP TABLE run_audit;
DROP TABLE budgets;
DROP INDEX runs_checked_by_installation;
ALTER TABLE runs DROP COLUMN stopped_by;
ALTER TABLE runs DROP COLUMN agent_attempts;
ALTER TABLE runs DROP COLUMN sandbox_peak_bytes;
ALTER TABLE runs DROP COLUMN sandbox_cpu_ms;
ALTER TABLE runs DROP COLUMN cached_tokens;
