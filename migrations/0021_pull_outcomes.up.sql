-- Issue 31: what became of each pull request a run published to: the ones frognano opened
-- (an issue run's runs.pr_number) and the others a run added commits to (a writer's mention on
-- a person's pull request; runs.kind followup/ci with runs.issue the pull request's number).
-- One row per pull request, written by package outcome alone (outcome/store*.go): when a run
-- publishes (opened or commits added), from pull_request events (closed, reopened,
-- ready_for_review, converted_to_draft, synchronize) and by reconciliation with GitHub (a periodic job and
-- `frognano outcomes sync`). Readers: `frognano stats`, the stats page, `frognano export`,
-- the runs list, metrics.
CREATE TABLE pull_outcomes (
    repo_id          bigint      NOT NULL,
    number           integer     NOT NULL CHECK (number > 0),
    installation_id  bigint      NOT NULL,
    owner            text        NOT NULL,
    repo             text        NOT NULL,
    -- ours: frognano opened it (its branch is frognano's); false: a person's pull request that
    -- a run added commits to.
    ours             boolean     NOT NULL,
    -- issue: the issue frognano's pull request was made for (NULL for a person's).
    issue            integer,
    first_run_id     bigint      NOT NULL,
    last_run_id      bigint      NOT NULL,
    -- model: the operator's name of the model that wrote the last run's patch (runs.model).
    model            text,
    opened_at        timestamptz NOT NULL, -- when the first run published to it
    -- gone: the repository or the pull request was deleted (or left the installation) while
    -- it was open: GitHub answered 404 or 410, and it is never asked about again.
    state            text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'merged', 'closed', 'gone')),
    draft            boolean     NOT NULL DEFAULT true,
    ready_at         timestamptz,          -- a person marked it ready for review
    ready_by         text,                 -- login only
    ended_at         timestamptz,          -- merged or closed (NULL while open; cleared on reopen)
    ended_by         text,                 -- who merged or closed it, login only
    reopened         integer     NOT NULL DEFAULT 0,
    -- bot_head_sha: the head commit frognano's last run published; people's commits are those
    -- on the branch after it (people_commits, counted when an event or a sync sees a new head).
    bot_head_sha     text,
    head_sha         text,
    -- bot_commits: how many commits the pull request had at bot_head_sha (GitHub's count, in
    -- the answer to frognano's own publish); people_commits is the count above it.
    bot_commits      integer,
    people_commits   integer     NOT NULL DEFAULT 0,
    merge_sha        text,
    -- At merge, on the files frognano's last patch touched: patch_lines is how many lines the
    -- patches of frognano's runs changed in them, people_lines how many lines of the merged
    -- result differ from frognano's last head in those files (git on the host, never the
    -- repository's code). NULL until measured.
    patch_lines      integer,
    people_lines     integer,
    -- replaced_by: a person's pull request that GitHub links to the issue and that was merged
    -- after this one was closed without merge.
    replaced_by      integer,
    followups        integer     NOT NULL DEFAULT 0, -- follow-up runs asked on it
    synced_at        timestamptz,          -- last time GitHub was asked (reconciliation)
    event_at         timestamptz,          -- last pull_request event applied
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, number)
);
CREATE INDEX pull_outcomes_open ON pull_outcomes (synced_at NULLS FIRST) WHERE state = 'open';
CREATE INDEX pull_outcomes_opened ON pull_outcomes (opened_at);
