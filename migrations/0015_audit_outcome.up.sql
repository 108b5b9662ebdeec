-- Issue 28, section 3: the audit trail records every write frognano attempted on GitHub, not
-- only those GitHub answered with a 2xx (githubapp/audit.go). outcome is what frognano knows
-- of it: 'done' (2xx), 'refused' (3xx or 4xx: not done there), 'unknown' (a 5xx, or no answer
-- after the request was sent: it may have happened), 'not sent' (it failed before reaching
-- GitHub). detail says why in frognano's own words when it is not done; status is 0 when no
-- answer came. Rows from before this migration were all answered with a 2xx: 'done'.
ALTER TABLE run_audit ADD COLUMN outcome text NOT NULL DEFAULT 'done'
    CHECK (outcome IN ('done', 'refused', 'unknown', 'not sent'));
ALTER TABLE run_audit ADD COLUMN detail text NOT NULL DEFAULT '';
