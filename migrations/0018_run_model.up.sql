-- Issue 30, models by name: the operator's name of the model server that wrote the run's
-- patch (FROGNANO_MODEL_NAME's or a FROGNANO_MODELS_FILE entry's; the escalation's when a
-- second model tried). NULL: a run recorded before this migration, or one that ended before
-- its agent ran.
ALTER TABLE runs ADD COLUMN model text;
