-- run_events is what a run did, in order, written by the worker as the run moves (attempt
-- started, agent started with its task, each finished step with its tool calls and
-- observations, the tests, the end), so the run page can follow a running run live: the
-- database is the only channel between the worker and the web server, which may be separate
-- processes. id orders a run's events (one writer per run at a time); data is redacted, capped
-- text from the model and the sandbox: untrusted.
CREATE TABLE run_events (
    id     bigserial   PRIMARY KEY,
    run_id bigint      NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    at     timestamptz NOT NULL DEFAULT now(),
    kind   text        NOT NULL,
    data   jsonb       NOT NULL DEFAULT '{}'
);

CREATE INDEX run_events_by_run ON run_events (run_id, id);
