// Package export owns `frognano export`: the runs kept in PostgreSQL written out as data to
// fine-tune or choose a model on, one record per run (its trajectory, in Leaf's trajectory
// format or as chat-completions JSON Lines with tool calls) and, in a side file, one line of
// labels per record, in the same order (the tests before and after, whether frognano's own
// tests verified the patch, what became of its pull request, what people changed before the
// merge, the reviewers' follow-up requests). Its order is the runs' ids, so the same database
// gives the same bytes, and a second export to the same file continues after the last whole
// pair of lines (Run). docs/export.md is its reference.
//
// export only reads: runs, run_events and pull_outcomes (which package outcome writes). It
// must never write to the database, never hold a GitHub token or talk to GitHub, never export
// a run of a repository the operator did not name (there is no "every repository"), and never
// write a text of a run without redacting it again (Redactor: the operator's values in every
// form internal/secretform knows, GitHub tokens and URL credentials, and gitleaks' rules),
// whatever was redacted when the run was stored.
package export
