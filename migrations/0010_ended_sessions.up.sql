-- Sign-outs of the run pages (web/auth). A session lives in an encrypted cookie; signing out
-- records the session here, so that a copy of the cookie taken before (a shared computer, a
-- proxy's log) stays refused by every frognano process, after restarts too, until the session
-- would have expired anyway. id_hash is the SHA-256 of the session's random id: never the
-- cookie, nor the GitHub token inside it. A row is deleted some time after expires_at, when the
-- cookie itself is refused for its age.
CREATE TABLE ended_sessions (
    id_hash    bytea       PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    expires_at timestamptz NOT NULL
);
CREATE INDEX ended_sessions_by_expiry ON ended_sessions (expires_at);
