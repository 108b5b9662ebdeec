-- Issue 30: the trigger label each repository's settings (.github/frognano.yml `label:`) name,
-- as last read from the default branch's head. The webhook server consults it for a labelled
-- issue: the operator's label (FROGNANO_LABEL) starts a run at once unless the repository is
-- known to name another; any other label, or a repository whose row is older than the cache's
-- age, is checked by a small job that reads the settings first (run/trigger.go). label ''
-- means the repository names none (the operator's applies). Written by run.Store alone
-- (run/store_settings.go), each time settings are read.
CREATE TABLE repo_labels (
    repo_id         bigint      PRIMARY KEY,
    installation_id bigint      NOT NULL,
    label           text        NOT NULL,
    read_at         timestamptz NOT NULL DEFAULT now()
);

-- trigger_label: the label that started a run (the event's label name as GitHub sent it);
-- NULL for a run not started by a label.
ALTER TABLE runs ADD COLUMN trigger_label text;

-- asked_refused: an option of a pull request's mention that cannot be used (unknown, repeated,
-- a bad value, or base=, which a pull request's run cannot take), as "NAME\nREASON": the
-- worker refuses the request with it once the requester is known to be a writer (run.Options'
-- Refused). NULL: none.
ALTER TABLE runs ADD COLUMN asked_refused text;
