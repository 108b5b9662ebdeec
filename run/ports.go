package run

import (
	"context"
	"time"

	"github.com/frognano/frognano/githubapp"
)

// The pipeline uses githubapp and runner directly. The three interfaces below exist only so
// that its tests can put fakes in their place: a *githubapp.Client is a Repo, GitHubApp
// makes a *githubapp.App a GitHub, and AgentRunner makes a *runner.Runner a Runner.

// GitHub gives access to one repository as one App installation.
type GitHub interface {
	// ForRepo opens repository repoID (its owner and name as recorded; the repository's
	// current name is used when it was renamed since).
	ForRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (Repo, error)
}

// GitHubApp is the pipeline's GitHub for a real App: ForRepo returns its *githubapp.Client.
func GitHubApp(app *githubapp.App) GitHub { return ghApp{app} }

type ghApp struct{ app *githubapp.App }

func (g ghApp) ForRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (Repo, error) {
	c, err := g.app.ForRepository(ctx, installationID, repoID, owner, repo)
	if err != nil {
		return nil, err // not a typed nil *githubapp.Client in a non-nil Repo
	}
	return c, nil
}

// Repo is everything the pipeline does on GitHub: the methods of *githubapp.Client it calls.
// Errors that are worth retrying (network, 5xx, rate limits) must satisfy fault.IsTransient.
type Repo interface {
	// Permission returns the user's permission on the repository:
	// "admin", "maintain", "write", "triage", "read" or "none".
	Permission(ctx context.Context, user string) (string, error)
	Issue(ctx context.Context, number int) (title, body, state string, err error)
	React(ctx context.Context, number int, content string) error
	Comment(ctx context.Context, number int, body string) (int64, error)
	EditComment(ctx context.Context, id int64, body string) error
	// FindComment returns the id of the App's own comment on issue number whose body begins
	// with marker, 0 when there is none (how a writer that may have posted before it died
	// finds what it posted).
	FindComment(ctx context.Context, number int, marker string) (int64, error)
	// RemoveLabel removes label from the issue; one that is not there is no error.
	RemoveLabel(ctx context.Context, number int, label string) error
	// Clone makes a fresh clone of the default branch in dir (which exists
	// and is empty) and reports its head commit and the branch name.
	Clone(ctx context.Context, dir string) (headSHA, defaultBranch string, err error)
	// Publish applies Patch on BaseSHA in Dir, pushes Branch and opens (or
	// updates) the draft pull request for it, and reports the pull request and the commit it
	// put at the branch's head. Calling it again for the same Branch must update the same pull
	// request, never open a second one.
	Publish(ctx context.Context, in githubapp.PublishInput) (githubapp.Published, error)
	// PullRequest reads a pull request (a follow-up's).
	PullRequest(ctx context.Context, number int) (githubapp.PullRequest, error)
	// CloneBranch clones branch into dir with baseBranch fetched too, and reports both heads.
	CloneBranch(ctx context.Context, dir, branch, baseBranch string) (headSHA, baseSHA string, err error)
	// ReviewComments reads the line comments of review reviewID on pull request number, at
	// most githubapp.MaxReviewComments (more: there were more).
	ReviewComments(ctx context.Context, number int, reviewID int64) (comments []githubapp.ReviewComment, more bool, err error)
	// FailedChecks reads the failed check runs of check suite suiteID with their output,
	// annotations and Actions logs (at most githubapp.MaxFailedChecks of total).
	FailedChecks(ctx context.Context, suiteID int64) (checks []githubapp.FailedCheck, total int, err error)
	// DefaultFile reads a file at the head of the default branch (nil, false: none);
	// OrgFile the same in the owner's repository name (the organisation's `.github`), false
	// also when the installation does not reach it. githubapp.ErrNotAFile: not a file.
	DefaultFile(ctx context.Context, path string) (data []byte, found bool, err error)
	OrgFile(ctx context.Context, name, path string) (data []byte, found bool, err error)
	// TeamMember reports whether user is an active member of the owner organisation's team
	// slug (githubapp.ErrNoMembersPermission: the installation cannot tell).
	TeamMember(ctx context.Context, slug, user string) (bool, error)
	// CommentURL is the address of comment id on issue number.
	CommentURL(number int, id int64) string
	// Grants are what the installation granted when the Repo was made: a run needs the core
	// permissions (Grants.MissingCore) and skips, saying why, what needs more.
	Grants() githubapp.Grants
	// ChecksWanted: the operator wants check runs (FROGNANO_CHECK_RUNS); ChecksOn: and the
	// installation granted checks: write, so Publish reports them.
	ChecksWanted() bool
	ChecksOn() bool
}

var _ Repo = (*githubapp.Client)(nil)

// Runner runs the agent on a host checkout. A returned error means the
// infrastructure failed (Docker, the model server); a run that ended without a
// fix is an Outcome with an empty Patch and a nil error.
type Runner interface {
	Run(ctx context.Context, spec RunSpec, progress func(Progress)) (*Outcome, error)
}

// ModelChooser is a Runner that offers the operator's named model servers (AgentRunner). The
// worker asks it, before the run passes its check, which model the run uses; a Runner that
// is not one runs every run with its one model.
type ModelChooser interface {
	// ChooseModel is the name of the model a run of repo (OWNER/NAME) that asked for asked
	// ("": none) uses, or a *runner.ModelRefused naming the ones repo may use.
	ChooseModel(repo, asked string) (string, error)
	// AllowedModels is the names repo may use, in the operator's order: the ceiling of a
	// repository settings file's `model`.
	AllowedModels(repo string) []string
}

// RunSpec describes one agent run.
type RunSpec struct {
	RunID       int64
	RepoDir     string
	Task        string
	Owner, Repo string
	// InstallationID and RepoID name the repository for what must not follow a name (its
	// environments: env.ServiceScope).
	InstallationID, RepoID int64
	Issue                  int
	// SetupCommit is the commit whose setup script builds the environment ("" : the
	// checkout's HEAD); a follow-up sets its base branch's head.
	SetupCommit string
	// PageURL is the run's page (RunPageURL); the pull request body and the check run link to
	// it. "": AgentRunner takes it from the run's event log (EventsFrom).
	PageURL string
	// Model is the operator's name of the model server the run uses (ModelChooser's choice);
	// "": the Runner's one model.
	Model string
	// Notices are lines the pull request body carries about what this run skips and why
	// (check runs off for want of a permission): frognano's own text.
	Notices []string
	// Attempts is how many agent attempts the requester chose (Options.Attempts, within the
	// operator's ceiling); 0: the runner's own.
	Attempts int
}

// Progress is reported by the Runner after each agent step, and when the run starts or
// stops waiting on the model server or for a free sandbox. Calls come from the model and are
// treated as untrusted text.
type Progress struct {
	Step    int    // 0 before the first step
	Calls   []Call // the step's tool calls, in order; none when the model gave its final answer
	Elapsed time.Duration
	// Waiting says what the run waits for at the model server ("429, retrying in 12 s",
	// leaf.ModelWait.String), "" while requests flow.
	Waiting string
	// SandboxWait says which sandbox of the run waits for a free slot on this worker
	// (FROGNANO_MAX_SANDBOXES): "for the tests before (2 of 2 in use on this worker)"; ""
	// while none waits.
	SandboxWait string
}

// Call is one tool call of a step: the tool's name and its raw arguments, as the model
// wrote them.
type Call struct {
	Tool, Arguments string
}

// Outcome is the result of a finished agent run.
type Outcome struct {
	Patch []byte
	// NoPatch says why there is no Patch (runner.Result.NoPatch: runner.NoPatchUnchanged,
	// NoPatchRefused, ...); "" when there is one.
	NoPatch                                string
	ExitReason, FinalMessage               string
	Steps, PromptTokens, CompletionTokens  int
	ModelTime, ToolTime, TestTime, Elapsed time.Duration
	// CachedTokens, SandboxCPU, SandboxPeak and AgentAttempts are the rest of the run's usage
	// (runner.Usage): the tokens above and the times are summed over every attempt.
	CachedTokens  int
	SandboxCPU    time.Duration
	SandboxPeak   int64
	AgentAttempts int
	// PRBody is the whole body of the pull request, the Fixes line (fixesLine) included,
	// redacted and within GitHub's limit: the runner's renderer is the only place that
	// cuts it.
	PRBody string
	// Summary is markdown for the status comment when there is no PR, redacted and within
	// GitHub's limit less what the status comment adds around it (statusReserve).
	Summary string
	// Headline is one line of markdown for the status comment of a run that opened a PR:
	// the tests before and after, and what was left out of the patch.
	Headline string
	// Trajectory is the run's JSON trajectory record.
	Trajectory []byte
	Report     string
	// Environment says which image the run's sandboxes were made from, and how.
	Environment string
	// SetupLog is the output of the repository's setup script when this run ran it (the end
	// of it, redacted): the repository's text.
	SetupLog string
	// Check is the check run `frognano / tests` to report on the pushed commit (its
	// output redacted and within the Checks API's limits); nil: none.
	Check *githubapp.CheckRun
	// Model is the operator's name of the model that wrote the patch (runs.model): the one
	// chosen, or the escalation's; "" for a Runner of one model.
	Model string
}
