package run

import (
	"context"

	"github.com/frognano/frognano/runner"
)

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

// noPatchNote says why run r has nothing to publish, from the runner's typed reason
// (runner.Result.NoPatch), never from its notes' text; so is what follows from it (", so there
// is no pull request."). The summary under it in the status comment says more.
func noPatchNote(r *row, so string) string {
	why := map[string]string{
		runner.NoPatchUnchanged: "The agent finished without changing any file",
		runner.NoPatchRefused:   "frognano refused the agent's patch (the summary below says why)",
		runner.NoPatchNotTaken:  "The agent's patch could not be taken out of its sandbox (the summary below says why)",
		runner.NoPatchTooLarge:  "The agent's patch is over the patch size limit (the summary below gives its size)",
		runner.NoPatchSetup:     "The repository's setup script failed, so the model was not called (the summary below says why)",
	}[r.NoPatch]
	if r.ExitReason == runner.ExitEnvironmentRefused {
		why = "frognano refused the environment the repository's setup script built, so the model was not called (the summary below says where it left a value the operator passes setup)"
	}
	if why == "" { // an agent that ran before the reason was kept
		why = "The run has no patch to publish (the summary below says why)"
	}
	return why + so
}
