// Package queue owns River's side of frognano's work (River on PostgreSQL): the job
// arguments, the client with its documented Config, the intake transactions the webhook
// server calls (Accept, Cancel, CancelInstallation, RequestStop, Record), the runs that wait
// for their pull request's active run (waiting.go), the small jobs beside a run (the stop
// request, the status rewrite, the periodic cleanup) and the environment lock across hosts.
//
// The worker puts a run's logger (internal/logging: run_id, job_id, installation_id, repo,
// issue) in the job's context, so the lines of run, runner, env and leaf name the run. Every
// line of the queue, the runs it works and River passes githubapp.RedactLogs: NewClient wraps
// the loggers it is given, and no log call redacts by hand.
//
// A run itself (its record, states, events, status comment and the pipeline that works it) is
// the run package's: the River worker calls run.Pipeline and maps what an attempt returns to
// River's outcomes (run.ErrBusy, the run parked: the job's end; a run.FinalError: JobCancel; anything else:
// River's retry). River's types never leave this package.
//
// queue never holds a credential itself (githubapp keeps the App key and the tokens). It must
// never start a second active run for an issue or pull request, never insert the job of a
// waiting run outside the transaction that ended the active one, and never retry a failure
// that is not transient (fault.IsTransient).
package queue
