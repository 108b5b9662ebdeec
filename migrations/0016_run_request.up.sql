-- Issue 30: how a run was asked for, and what the person asked.
--
-- trigger is how the run was asked for: 'label' (the issue's label), 'mention' (a comment that
-- mentions the App), 'api' (POST /api/v1/runs, or `frognano runs start`), 'followup' and 'ci'
-- (a follow-up by a reviewer's mention, or by failed CI). NULL: a run recorded before this
-- migration. asked_base, asked_attempts and asked_model are the options asked at trigger
-- (run.Options; NULL: not asked), checked against the repository's settings and the operator's
-- ceilings by the worker. token_id is the API token that asked (api_tokens.id; NULL: none).
ALTER TABLE runs ADD COLUMN trigger text;
ALTER TABLE runs ADD COLUMN asked_base text;
ALTER TABLE runs ADD COLUMN asked_attempts integer CHECK (asked_attempts > 0);
ALTER TABLE runs ADD COLUMN asked_model text;
ALTER TABLE runs ADD COLUMN token_id bigint;
