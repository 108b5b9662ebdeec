-- A follow-up run works on a frognano pull request's branch at a reviewer's request. Its
-- issue is the pull request's number (so at most one run is active per pull request), labeler
-- is the reviewer, request their words (shown to the model only once the worker has checked
-- that they may write), request_url the comment to answer.
ALTER TABLE runs ADD COLUMN kind text NOT NULL DEFAULT 'issue' CHECK (kind IN ('issue', 'followup'));
ALTER TABLE runs ADD COLUMN request text;
ALTER TABLE runs ADD COLUMN request_url text;
