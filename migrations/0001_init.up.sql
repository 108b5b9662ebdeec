-- deliveries remembers every webhook delivery we acted on, so that a redelivery
-- (same hook target and X-GitHub-Delivery GUID) is recognised even after River
-- has deleted its finished job rows. Rows are kept for the retention period
-- (default 10 days; GitHub Enterprise Server redelivers for up to 7).
CREATE TABLE deliveries (
    hook_target     text        NOT NULL,
    delivery_id     text        NOT NULL,
    event           text        NOT NULL,
    action          text        NOT NULL DEFAULT '',
    installation_id bigint,
    run_id          bigint,
    outcome         text        NOT NULL DEFAULT '',
    received_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (hook_target, delivery_id)
);

CREATE INDEX deliveries_received_at_idx ON deliveries (received_at);

-- runs is the durable record of one request to work on one issue.
CREATE TABLE runs (
    id                bigserial   PRIMARY KEY,
    hook_target       text        NOT NULL,
    delivery_id       text        NOT NULL,
    installation_id   bigint      NOT NULL,
    repo_id           bigint      NOT NULL,
    owner             text        NOT NULL,
    repo              text        NOT NULL,
    issue             integer     NOT NULL CHECK (issue > 0),
    labeler           text        NOT NULL,
    state             text        NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    job_id            bigint,
    comment_id        bigint,
    attempts          integer     NOT NULL DEFAULT 0,
    -- extra_requests counts labels applied while this run was already active:
    -- they start no second run, the worker mentions them in the status comment.
    extra_requests    integer     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    base_sha          text,
    base_branch       text,
    exit_reason       text,
    steps             integer,
    prompt_tokens     bigint,
    completion_tokens bigint,
    model_ms          bigint,
    tool_ms           bigint,
    test_ms           bigint,
    elapsed_ms        bigint,
    -- patch is kept once the agent has finished so that a retry after a failed
    -- publish does not run the model again.
    patch             bytea,
    agent_done_at     timestamptz,
    pr_url            text,
    pr_number         integer,
    error             text,
    trajectory        jsonb,
    report            text,
    summary           text,
    pr_body           text
);

-- At most one active run per issue. repo_id (not owner/name) because a
-- repository can be renamed while a run is queued.
CREATE UNIQUE INDEX runs_one_active_per_issue ON runs (repo_id, issue)
    WHERE state IN ('queued', 'running');

CREATE INDEX runs_running_by_installation ON runs (installation_id)
    WHERE state = 'running';

CREATE INDEX runs_by_issue ON runs (owner, repo, issue);
