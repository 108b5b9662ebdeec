// Package queue owns the durable work queue (River on PostgreSQL): the job
// arguments, the intake transactions the webhook server calls, and the worker
// that orchestrates one run from the labeler's permission check to the draft
// pull request and the final status comment.
//
// queue talks to GitHub and to the agent only through the GitHub and Runner
// interfaces defined here; it never holds a credential itself and never
// passes one to the Runner. It must never start a second active run for an
// issue, never publish anything but a draft pull request on the issue's own
// branch (frognano/issue-N), and never retry a failure that is not transient.
package queue
