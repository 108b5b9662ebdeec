-- source_id is what a follow-up reads on the host once its requester is checked: the pull
-- request review whose line comments come with the request (kind followup, from a review or a
-- line comment), or the failed check suite whose checks, annotations and logs the task shows
-- (kind ci). NULL: nothing more than the request.
ALTER TABLE runs ADD COLUMN source_id bigint;
