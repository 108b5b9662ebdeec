// Package run owns one run of frognano from the moment a worker picks it up to its final
// status comment: its record (the runs row: Record, the states and kinds), the Store that
// reads and writes it, its events (run_events, which the run pages follow), the texts GitHub
// shows of it (worded in the text_*.go files, one per kind: the status comment and its notes,
// refusals, notices, replies, the pull request's title, body end and commit messages), the
// follow-up's task, and the Pipeline that works a run of every kind. The Pipeline is one skeleton (who may start it,
// the status comment, the task, a clone, the agent, publish, the end) and a small plan per
// kind of run (issuePlan, followUpPlan, ciPlan: which task, which clone, what to publish).
//
// The queue package calls the Pipeline from its River worker and maps what an attempt
// returns to River's outcomes (ErrBusy: the run is parked and its job ends; a FinalError:
// cancel the job; any other error: River's retry). run never imports River and never inserts
// a job: ending a run promotes the run waiting behind it, and wakes the parked runs of its
// installation, through the Promote function the queue gives its Store. The run pages and
// `frognano runs` read runs through Reader.
//
// run never holds a credential (githubapp keeps the App key and the tokens) and never passes
// one to the runner. It must never start the agent for a request before its requester was
// found to have write access, never publish anything but a draft pull request on the issue's
// own branch (BranchName) or a fast-forward commit on a follow-up's own open pull request, and
// never ask for a retry of a failure that is not transient (fault.IsTransient).
package run
