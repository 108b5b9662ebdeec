DROP TABLE pull_outcomes;
