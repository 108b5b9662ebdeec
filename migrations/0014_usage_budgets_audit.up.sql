-- Issue 22, sections 2 and 3: what a run used, the budgets it is held to, and what it did on
-- GitHub.
--
-- Usage per run (run/usage.go): cached_tokens is the part of prompt_tokens the model server
-- served from its prompt cache (OpenAI's usage.prompt_tokens_details.cached_tokens; NULL:
-- the server did not say); sandbox_cpu_ms is the CPU time of every sandbox of the run
-- (agent, tests, setup) as the engine's cgroup counted it, summed; sandbox_peak_bytes the
-- highest memory use of one of them; agent_attempts how many agent attempts the run made
-- (FROGNANO_ATTEMPTS). The columns are NULL for runs whose agent ran before this migration.
ALTER TABLE runs ADD COLUMN cached_tokens bigint;
ALTER TABLE runs ADD COLUMN sandbox_cpu_ms bigint;
ALTER TABLE runs ADD COLUMN sandbox_peak_bytes bigint;
ALTER TABLE runs ADD COLUMN agent_attempts integer;
-- stopped_by is who stopped or cancelled the run: the GitHub login of whoever removed the
-- label, closed the issue or asked `@APP stop` (NULL: nobody did, or before this migration).
-- Who started it is labeler (with kind: the labeller, the follow-up's author, or the App for CI).
ALTER TABLE runs ADD COLUMN stopped_by text;
-- The budgets count the runs that passed their check (checked_at) in the current UTC day, by
-- installation and by repository (run/budget.go).
CREATE INDEX runs_checked_by_installation ON runs (installation_id, checked_at) WHERE checked_at IS NOT NULL;

-- budgets holds the operator's per-installation overrides of the FROGNANO_BUDGET_* settings
-- (`frognano budget set`), read by every worker at each run's check: a change applies to the
-- next run without a restart. NULL: the setting's value; 0: no limit.
CREATE TABLE budgets (
    installation_id     bigint      PRIMARY KEY,
    runs_per_day        integer     CHECK (runs_per_day >= 0),
    tokens_per_day      bigint      CHECK (tokens_per_day >= 0),
    repo_runs_per_day   integer     CHECK (repo_runs_per_day >= 0),
    repo_tokens_per_day bigint      CHECK (repo_tokens_per_day >= 0),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

-- run_audit is every write frognano made on GitHub on behalf of a run (githubapp/audit.go):
-- the HTTP API's writes, recorded once each by the installation client's transport, and the
-- git pushes. It names the object made or changed and GitHub's X-GitHub-Request-Id; it never
-- holds a token, a request or response body, or any text of an issue or comment.
CREATE TABLE run_audit (
    id          bigserial   PRIMARY KEY,
    run_id      bigint      NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    action      text        NOT NULL,
    method      text        NOT NULL,
    path        text        NOT NULL,
    status      integer     NOT NULL,
    object_type text        NOT NULL,
    object_id   text        NOT NULL DEFAULT '',
    object_sha  text        NOT NULL DEFAULT '',
    object_url  text        NOT NULL DEFAULT '',
    request_id  text        NOT NULL DEFAULT ''
);
CREATE INDEX run_audit_by_run ON run_audit (run_id, id);
