-- headline is the one line the status comment of a finished run shows next to the pull request
-- link: what the tests said before and after, and what was left out of the patch.
ALTER TABLE runs ADD COLUMN headline text;
