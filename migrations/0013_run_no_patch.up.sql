-- no_patch says why a run that ended has no patch to publish (runner.Result.NoPatch:
-- 'unchanged', 'not_taken', 'refused', 'too_large', 'setup'); the run's end tells the
-- maintainer from it, not from the notes' text. NULL: the run has a patch, or its agent ran
-- before this column existed.
ALTER TABLE runs ADD COLUMN no_patch text;
