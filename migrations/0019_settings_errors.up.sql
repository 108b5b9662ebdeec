-- Issue 30: invalid settings files (.github/frognano.yml), one row per distinct error per
-- repository. The first run that meets an error posts one comment naming the file, the line
-- and what is wrong, and records it here; later runs that meet the same error (the same
-- fingerprint: a SHA-256 of the problems' text) link to that comment instead of posting it
-- again. resolved_at is set when a run of the repository finds its settings valid again, and
-- cleared when the error comes back; `frognano doctor` lists the rows not resolved. Written by
-- run.Store alone (run/store_settings.go).
CREATE TABLE settings_errors (
    repo_id         bigint      NOT NULL,
    fingerprint     text        NOT NULL,
    installation_id bigint      NOT NULL,
    owner           text        NOT NULL,
    repo            text        NOT NULL,
    problems        text        NOT NULL,
    run_id          bigint      NOT NULL,
    issue           integer     NOT NULL,
    comment_id      bigint,
    comment_url     text,
    first_seen_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    PRIMARY KEY (repo_id, fingerprint)
);
CREATE INDEX settings_errors_open ON settings_errors (repo_id) WHERE resolved_at IS NULL;
