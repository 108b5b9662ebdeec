DROP TABLE repo_labels;
