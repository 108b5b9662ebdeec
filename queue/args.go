package queue

import (
	"github.com/riverqueue/river"
)

// QueueName is the River queue of the run jobs (RunArgs): a process works at most
// Config.Workers of them at once, and nothing else runs on it, so that FROGNANO_WORKERS is
// exactly the runs (and so the sandboxes and the memory) a process takes on.
const QueueName = "frognano"

// SmallQueueName is the River queue of the small jobs beside the runs (cleanupArgs,
// statusArgs, StopArgs), worked by SmallWorkers of their own: a small job never takes a run's
// place, and a run never waits for one.
const SmallQueueName = "frognano_small"

// SmallWorkers is how many small jobs a working process runs at once.
const SmallWorkers = 2

// MaxAttempts bounds how often a run job is tried. Only transient failures
// (fault.IsTransient) are retried; anything else cancels the job at once.
const MaxAttempts = 3

// RunArgs is the River job that performs one run. The run row (table runs)
// holds everything else; the extra fields only make River's UI readable.
type RunArgs struct {
	RunID          int64  `json:"run_id"`
	InstallationID int64  `json:"installation_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	Issue          int    `json:"issue"`
	// Spent is how many attempts earlier jobs of the run spent: a parked run's wake gives it a
	// new job (parked.go), whose attempts count on from them.
	Spent int `json:"spent,omitempty"`
}

// Kind implements river.JobArgs.
func (RunArgs) Kind() string { return "frognano_run" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: MaxAttempts}
}

// cleanupArgs is the periodic job that forgets deliveries older than the
// retention period.
type cleanupArgs struct{}

// Kind implements river.JobArgs.
func (cleanupArgs) Kind() string { return "frognano_cleanup_deliveries" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (cleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: 1}
}

// statusArgs writes, with Outbox, what a run's end left for GitHub, if its worker did not
// (outbox.go). Without Outbox (jobs an earlier frognano queued) it rewrites the status
// comment of a run cancelled while it waited for a retry, or (Dead) one the cleanup ended
// because its job had ended without it.
type statusArgs struct {
	RunID  int64 `json:"run_id"`
	Dead   bool  `json:"dead,omitempty"`
	Outbox bool  `json:"outbox,omitempty"`
}

// Kind implements river.JobArgs.
func (statusArgs) Kind() string { return "frognano_status" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (statusArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: MaxAttempts}
}
