// Package outcome records what became of each pull request a run published to (issue 31):
// merged or closed without merge, by whom and when, whether a person marked it ready, the
// commits people pushed on top and, at merge, how much of frognano's patch people changed.
//
// It is the one writer of the pull_outcomes table (migrations/0021_pull_outcomes.up.sql): a
// run that publishes tells it (Store.Published, the run.Store's Published hook, in the
// transaction that records the run's success), the webhook server hands it pull_request events
// (Store.ApplyEvent, in the queue's intake transaction), and reconciliation (Reconciler.Round:
// the queue's periodic job and `frognano outcomes sync`) asks GitHub about the open ones that
// events may have missed, within the operator's budget of calls. At merge, Reconciler.Measure
// compares the merged head with frognano's last one on the files its patches touched, with
// git on the host. Readers (stats, the stats page, export, the runs list) read the table.
//
// Must never: run repository code (the merged result is compared with git on the host, in a
// repository of its own that holds only fetched objects, never checked out), store anything of
// a person but their login, write the runs table, or call GitHub beyond the operator's budget
// of calls per round (Budget) or when GitHub's rate limit runs low.
package outcome
