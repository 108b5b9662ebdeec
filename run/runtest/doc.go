// Package runtest is the test harness of a run, as River's rivertest is of a job: one call
// builds the run package's Pipeline on a fresh migrated PostgreSQL schema (migrations/dbtest)
// with a fake GitHub and a scripted agent, one call records a request as the queue's intake
// would, one call works an attempt through Pipeline.Work, and its Require helpers fail with a
// message that names what was expected.
//
// Two fakes of GitHub are offered: Repo, an in-process run.Repo that records every call and
// answers what the test sets (New), and the fake GitHub server of githubapp/githubtest behind
// the real githubapp client (NewWithGitHub), for what GitHub itself answers (refusals, rate
// limits, the audit trail). The agent is Runner, a run.Runner that returns what the test
// scripts (GoodOutcome by default): no Docker, no model.
//
// runtest is imported only from _test.go files: nothing in frognano's programs may depend on
// it (internal/layout checks). It must never import the queue: the queue's own tests use its
// fakes, and River's side of a run (jobs, retries, snoozes, parking and waking) is theirs to
// test; runtest stands in for the queue only where a run needs it, as the queue would
// (Request records a run as intake does; Cancel cancels it as an unlabel does; Work makes
// an attempt as River's worker does).
package runtest
