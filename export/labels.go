package export

import "time"

// Labels is one line of the labels file: what is known of the run whose record has the same
// line number in the records file. docs/export.md describes each field. It names no person:
// no login of who asked, reviewed, merged or closed.
type Labels struct {
	RunID      int64  `json:"run_id"`
	Repository string `json:"repository"` // OWNER/NAME, the repository's latest name
	// Kind is the run's kind: issue (a label or a mention on an issue), followup (a
	// reviewer's request on a pull request) or ci (a failed check on frognano's pull request).
	Kind string `json:"kind"`
	// Issue is the issue the run (or the pull request it worked on) was for; null when
	// unknown (a follow-up on a person's pull request).
	Issue       *int      `json:"issue"`
	PullRequest *int      `json:"pull_request"` // the pull request the run published to; null: none
	Model       string    `json:"model"`        // the operator's name of the model; "" before models were named
	CreatedAt   time.Time `json:"created_at"`
	State       string    `json:"state"`       // succeeded, failed, cancelled, skipped
	ExitReason  string    `json:"exit_reason"` // the loop's (agent, max_turns, ...) or the run's
	Steps       int       `json:"steps"`
	BaseCommit  string    `json:"base_commit"` // the commit the run started from
	// CutMessages is how many messages of the trajectory's end a chat-jsonl record leaves out
	// (an assistant turn whose calls did not all get an observation); 0 for leaf.
	CutMessages int `json:"cut_messages"`
	// Tests are frognano's own test runs before and after the patch; null when none ran.
	Tests *Tests `json:"tests"`
	// Check is the conclusion of the check run frognano reported (success, failure,
	// neutral; "" when none), judged from the after-run alone; Verified is Check ==
	// "success": the tests after the patch broke nothing and pass, or fix what failed.
	Check    string `json:"check"`
	Verified bool   `json:"verified"`
	// Outcome is what became of the pull request (pull_outcomes); null when the run
	// published none, or it is not followed yet.
	Outcome *Outcome `json:"outcome"`
	// FollowUps are the requests reviewers made on the same pull request after this run
	// (runs of kind followup), oldest first: what they asked to change.
	FollowUps []FollowUp `json:"followups"`
}

// Tests is a run's tests before and after, as the run page shows them.
type Tests struct {
	Before  *TestRun  `json:"before"`
	After   *TestRun  `json:"after"`
	PerTest bool      `json:"per_test"` // the results could be read per test
	Tests   []TestRow `json:"tests"`    // broken, fixed, still failing and new first; at most 500
	More    int       `json:"more_tests"`
}

// TestRun is one run of the repository's tests (its output is not exported).
type TestRun struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Passed   int    `json:"passed"`
	Failed   int    `json:"failed"`
	Error    string `json:"error,omitempty"` // the run could not be carried out
}

// TestRow is one test before and after: pass, fail, skip, or "" when it had no result.
type TestRow struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
	Change string `json:"change"` // fixed, broken, still failing, new, or ""
}

// Outcome is what became of a run's pull request.
type Outcome struct {
	State string `json:"state"` // open, merged, closed (without merge), or as pull_outcomes says
	// Ours: frognano opened it; false: a person's pull request a run added commits to.
	Ours bool `json:"ours"`
	// LastRun: this run's commits were the last frognano put on it.
	LastRun  bool       `json:"last_run"`
	Draft    bool       `json:"draft"`
	Ready    bool       `json:"ready"` // a person marked it ready for review
	OpenedAt time.Time  `json:"opened_at"`
	EndedAt  *time.Time `json:"ended_at"`
	Reopened int        `json:"reopened"`
	// PeopleCommits are the commits people pushed after frognano's last.
	PeopleCommits int `json:"people_commits"`
	// PatchLines and PeopleLines, measured at merge on the files frognano's last patch
	// touched: the lines frognano's patches changed, and the lines of the merged result that
	// differ from frognano's last head; null until measured. PeopleShare is their ratio.
	PatchLines  *int     `json:"patch_lines"`
	PeopleLines *int     `json:"people_lines"`
	PeopleShare *float64 `json:"people_share"`
	MergeCommit string   `json:"merge_commit,omitempty"`
	ReplacedBy  *int     `json:"replaced_by"` // a person's pull request merged in its stead
	FollowUps   int      `json:"followups"`   // follow-up runs asked on it
}

// FollowUp is one reviewer's request of a follow-up run.
type FollowUp struct {
	RunID   int64  `json:"run_id"`
	Request string `json:"request"`
}
