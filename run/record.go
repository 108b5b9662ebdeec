package run

import "github.com/frognano/frognano/githubapp"

// Run states, as stored in runs.state.
const (
	StateWaiting   = "waiting" // a request waiting for its pull request's active run (queue/waiting.go)
	StateQueued    = "queued"
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
	StateSkipped   = "skipped"
)

// Run kinds, as stored in runs.kind. Each has its plan (plan.go).
const (
	KindIssue    = "issue"    // a labelled issue
	KindFollowUp = "followup" // a reviewer's request on a frognano pull request
	KindCI       = "ci"       // the repository's CI failed on a frognano pull request's head
)

// Triggers, as stored in runs.trigger: how a run was asked for.
const (
	TriggerLabel    = "label"    // the issue's trigger label
	TriggerMention  = "mention"  // a comment that mentions the App on an issue or a pull request
	TriggerAPI      = "api"      // POST /api/v1/runs or `frognano runs start`, with an API token
	TriggerFollowUp = "followup" // a reviewer's mention on a frognano pull request
	TriggerCI       = "ci"       // failed CI on a frognano pull request
)

// tokenRequester begins the requester (runs.labeler) of a run an API token asked for.
const tokenRequester = "token:"

// TokenRequester is who a run asked for by the API token called name is recorded as asking
// (runs.labeler): no GitHub login holds a colon, so it is never credited as a co-author nor
// asked to review.
func TokenRequester(name string) string { return tokenRequester + name }

// Unfinished reports whether a run in state may still run: waiting, queued or running.
func Unfinished(state string) bool {
	return state == StateWaiting || state == StateQueued || state == StateRunning
}

func terminal(state string) bool { return !Unfinished(state) }

// MaxWaitingRuns bounds the waiting runs of one pull request (the queue's intake keeps it).
// Requests beyond it are counted on the active run, so people who may not write cannot make
// the worker post more than this many refusals by flooding a pull request with requests while
// one is being checked; one person has at most one waiting run there, their later requests
// being counted on it.
const MaxWaitingRuns = 5

// DefaultCIFollowUps is how many follow-ups failed CI may start on one pull request.
const DefaultCIFollowUps = 1

// row is the pipeline's view of one runs row: what an attempt reads once (Store.load) and
// keeps up to date as it goes.
type row struct {
	ID             int64
	InstallationID int64
	RepoID         int64 // the repository's immutable id: names it where a name could be taken
	Owner, Repo    string
	Issue          int // the issue, or a follow-up's pull request
	Labeler        string
	State          string
	CommentID      int64
	Attempts       int
	ExtraRequests  int
	BaseSHA        string
	BaseBranch     string
	AgentDone      bool
	Patch          []byte
	NoPatch        string // why there is no Patch (runner.Result.NoPatch); "" also for old rows
	ExitReason     string
	Steps          int
	ElapsedMS      int64
	Summary        string
	PRBody         string
	Headline       string
	Check          *githubapp.CheckRun // the check run to report once published; nil: none
	Kind           string              // KindIssue, KindFollowUp or KindCI
	Request        string              // a follow-up's request, unchecked text
	RequestURL     string
	CISHA          string // a ci run's failed commit
	Trigger        string // how the run was asked for (Trigger*); "" for runs recorded before it was kept
	Asked          Options
	TokenID        int64  // the API token that asked (0: none)
	TriggerLabel   string // the label whose event asked for the run (runs.trigger_label; "": none)
}
