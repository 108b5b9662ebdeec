-- A ci run is a follow-up started by the repository's own CI failing on the head commit of a
-- frognano pull request; ci_sha is that commit (the run only starts while it is the head).
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('issue', 'followup', 'ci'));
ALTER TABLE runs ADD COLUMN ci_sha text;
