// Package queue owns the durable work queue (River on PostgreSQL): the job
// arguments, the intake transactions the webhook server calls, and the worker
// that orchestrates one run from the labeler's permission check to the draft
// pull request and the final status comment.
//
// The worker uses githubapp (as the labeler's installation) and runner directly,
// through three small interfaces (GitHub, Repo, Runner) that its tests fill
// with fakes. queue never holds a credential itself (githubapp keeps the App
// key and the tokens) and never passes one to the runner. It must never start
// a second active run for an issue, never publish anything but a draft pull
// request on the issue's own branch (frognano/issue-N), and never retry a
// failure that is not transient (fault.IsTransient).
package queue
