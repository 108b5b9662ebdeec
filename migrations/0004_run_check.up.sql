-- check_run is the check run `frognano / tests` a run reports on the commit it pushes (name,
-- conclusion, title, summary, text), kept so that a retry after a failed publish reports it too.
ALTER TABLE runs ADD COLUMN check_run jsonb;
