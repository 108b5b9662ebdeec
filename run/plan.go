package run

import "context"

// plan is what differs between the kinds of run. The pipeline (attempt.do) calls its methods
// in the order they are listed, each at most once per attempt; a method that ends the run
// itself (a refusal, a closed issue) says so with ok false.
type plan interface {
	// admit checks that the run may go ahead: who asked, and whether what they asked about
	// is still frognano's to work on. When it may not, admit has ended the run (ok false).
	admit(ctx context.Context, a *attempt) (ok bool, err error)
	// greet posts the status comment (a follow-up's reply), or takes over the one an earlier
	// attempt posted.
	greet(ctx context.Context, a *attempt) error
	// note is the status comment's line while the run works.
	note(a *attempt) string
	// task reads the model's task; ok false: the run was ended (its issue or pull request was
	// closed).
	task(ctx context.Context, a *attempt) (task string, ok bool, err error)
	// clone checks out what the agent starts from into spec.RepoDir, completes spec, and
	// reports the commit and branch the patch applies to.
	clone(ctx context.Context, a *attempt, spec *RunSpec) (baseSHA, baseBranch string, err error)
	// publish puts the agent's patch on GitHub, or says why not, and ends the run.
	publish(ctx context.Context, a *attempt, dir string) error
	// cancelled is the status comment's note of a run that was cancelled.
	cancelled() string
}

// planFor returns a new plan for one attempt at a run of kind.
func planFor(kind string) plan {
	switch kind {
	case KindFollowUp:
		return &followUpPlan{}
	case KindCI:
		return &ciPlan{}
	default:
		return &issuePlan{}
	}
}
