-- Issue 30: the operator's API tokens (`frognano tokens`, POST /api/v1/runs; api/tokens.go is
-- the table's one writer).
--
-- A token is a random secret shown once when it is made; only its SHA-256 is kept (hash), so
-- the table leaks no usable credential. It is scoped to installations (installation_ids) and to
-- repositories (repos, "owner/name" in lower case), at least one of either; a run it asks for
-- must be in one of them. revoked_at set: refused from then on (the row stays, for the runs
-- whose token_id names it and for the list). last_used_at: the last request it authenticated.
CREATE TABLE api_tokens (
    id               bigserial   PRIMARY KEY,
    name             text        NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    hash             bytea       NOT NULL UNIQUE CHECK (length(hash) = 32),
    installation_ids bigint[]    NOT NULL DEFAULT '{}',
    repos            text[]      NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_used_at     timestamptz,
    revoked_at       timestamptz,
    CHECK (cardinality(installation_ids) + cardinality(repos) > 0)
);
-- One live token per name, so that a name in the audit trail and in a run's record is one token.
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;
