package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/settings"
)

// bookkeepingTimeout bounds the database and GitHub calls made after the attempt's own
// context has ended (to record why it ended).
const bookkeepingTimeout = 30 * time.Second

// errRunCancelled: the run was cancelled in the database while we worked.
var errRunCancelled = errors.New("run was cancelled")

// errEnded: a plan's step ended the run itself (and said why on GitHub); the attempt is over.
var errEnded = errors.New("the run was ended by its plan")

// ErrBusy is Work's answer when the run's installation already has PerInstallationLimit runs
// running: the run is parked (queued, parked_at set), the queue ends the job, and the end of a
// running run of the installation wakes it with a new job (queue/parked.go).
var ErrBusy = errors.New("the installation has as many runs running as it may")

// FinalError is an error after which the queue must not try the run again (River: JobCancel):
// the run has ended, and its record says how, or it cannot be worked at all.
type FinalError struct{ Err error }

func (e *FinalError) Error() string { return e.Err.Error() }
func (e *FinalError) Unwrap() error { return e.Err }

func final(err error) error { return &FinalError{Err: err} }

// allowedPermissions may start a run.
var allowedPermissions = map[string]bool{"admin": true, "maintain": true, "write": true}

// MayStart reports whether a person with permission on a repository (as GitHub names it:
// "admin", "maintain", "write", "triage", "read" or "none") may start a run there, or stop one.
func MayStart(permission string) bool { return allowedPermissions[permission] }

// Config configures a Pipeline. The queue builds it from its own Config (queue.Config documents
// the defaults it gives these fields).
type Config struct {
	GitHub GitHub // required
	Runner Runner // required
	Store  *Store // required, with the queue's Promote
	// JobTimeout is the whole run's budget: the queue enforces it; the pipeline names it when a
	// run exceeds it, and ends a run GitHub asks to wait longer than it.
	JobTimeout time.Duration
	// PerInstallationLimit is how many runs of one installation may run at once (more: ErrBusy).
	PerInstallationLimit int
	// StatusEditInterval is the least time between two progress edits of the status comment;
	// negative: no throttling (tests).
	StatusEditInterval time.Duration
	// WorkDir is where host clones are made, one temporary directory per attempt.
	WorkDir string
	// Label starts a run; a failed issue run removes it, so that adding it again retries. "":
	// labels are left alone.
	Label string
	// CIFollowUps is how many CI follow-ups one pull request may have: 0 means
	// DefaultCIFollowUps, a negative value none.
	CIFollowUps int
	// PublicURL is the base address of the run pages (RunPageURL); "": no links.
	PublicURL string
	// RemoteCancel is the cause an attempt's context ends with when the run was cancelled from
	// outside while it worked (River's rivertype.ErrJobCancelledRemotely); such an end, like
	// the run found cancelled in its record, ends the run as cancelled.
	RemoteCancel error
	// Ceilings are the operator's limits on what a repository's settings file may set
	// (settings.Limit): FROGNANO_ATTEMPTS, the models it offers, the runs per day.
	Ceilings settings.Ceilings
	// EndStep, when set, is called at each step of a run's end (StepPublishing ... StepWritten,
	// outbox.go) with the run's id: tests stop a worker there. The service never sets it.
	EndStep func(ctx context.Context, runID int64, step string)
}

// Pipeline works runs of every kind (KindIssue, KindFollowUp, KindCI).
type Pipeline struct{ cfg Config }

// NewPipeline returns the Pipeline of cfg.
func NewPipeline(cfg Config) *Pipeline { return &Pipeline{cfg: cfg} }

// Try is one attempt at a run, as the queue makes it.
type Try struct {
	RunID                int64
	Attempt, MaxAttempts int          // this attempt (from 1) and the most the queue makes
	Log                  *slog.Logger // the run's logger (with its attributes), redacting (githubapp.RedactLogs)
}

// Work makes one attempt at run t.RunID. It returns nil when the attempt has ended the run (or
// found nothing to do), ErrBusy when the run must wait for its installation, a *FinalError when
// the run must not be tried again, and any other error for the queue's retry: a transient
// failure (the run is back to queued and its status comment says so), or the end of ctx at a
// shutdown (the run is back to queued, and the error wraps ctx.Err()).
func (p *Pipeline) Work(ctx context.Context, t Try) error {
	st, log := p.cfg.Store, t.Log
	r, err := st.load(ctx, t.RunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return final(err)
	}
	if err != nil {
		return err
	}
	ctx = githubapp.WithAuditRun(ctx, r.ID) // its GitHub writes go to its audit trail
	if terminal(r.State) {
		// The process that ended it may have died before GitHub showed the end.
		if wrote, err := p.WriteOutbox(ctx, r.ID, log); IsOutboxBusy(err) {
			log.InfoContext(ctx, "another process is writing the run's end to GitHub; its status job follows it")
			return nil
		} else if wrote || err != nil {
			return err
		}
		log.InfoContext(ctx, "run already finished; nothing to do", "state", r.State)
		return nil
	}
	started, busy, err := st.start(ctx, r, p.cfg.PerInstallationLimit)
	if err != nil {
		return err
	}
	if busy {
		log.InfoContext(ctx, "installation at its concurrency limit; parked until a run of it ends", "limit", p.cfg.PerInstallationLimit)
		return ErrBusy
	}
	if !started {
		log.InfoContext(ctx, "run is no longer active; nothing to do")
		return nil
	}
	// The run page follows the run through its events (events.go).
	ev := &EventLog{pool: st.pool, runID: r.ID, log: log, page: RunPageURL(p.cfg.PublicURL, r.ID)}
	ctx = withEvents(ctx, ev)
	ev.Add(ctx, EventAttempt, AttemptEvent{Attempt: t.Attempt, MaxAttempts: t.MaxAttempts})
	defer ev.ended(ctx)
	a := &attempt{p: p, try: t, run: r, st: st, log: log, plan: planFor(r.Kind)}
	return a.settle(ctx, a.do(ctx))
}

// attempt is one try at one run.
type attempt struct {
	p      *Pipeline
	try    Try
	run    *row
	st     *Store
	log    *slog.Logger
	plan   plan
	repo   Repo
	status *statusComment // nil until the status comment exists
	// settings are the repository's (over its organisation's) settings within the operator's
	// ceilings, read at the start of the attempt; settingsNotes name what the ceilings lowered.
	settings      settings.Settings
	settingsNotes []string
	// published is what the plan's publish put on GitHub (nil: nothing yet); the end that
	// records the run's success hands it to the Store's Published hook (package outcome).
	published *Publication
}

// do is the one skeleton of every run. Its plan says what differs by kind: who may ask, the
// status comment, the task, the clone and what is published.
func (a *attempt) do(ctx context.Context) error {
	r := a.run
	// A run an API token asked for writes nothing on GitHub once its token is revoked, not
	// even a settings file's problems or a missing permission: its token is checked first.
	if r.Trigger == TriggerAPI {
		if ok, err := a.admitToken(ctx); err != nil || !ok {
			return err
		}
	}
	repo, err := a.p.cfg.GitHub.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	a.repo = repo
	// Without a core permission nothing can be done here: say which, where one can (no retry).
	if missing := repo.Grants().MissingCore(); len(missing) > 0 {
		return a.lacksPermissions(ctx, &githubapp.MissingPermissionsError{Grants: repo.Grants(), Missing: missing})
	}

	// The settings file: an invalid one ends the run here, and says where it is wrong.
	if ok, err := a.applySettings(ctx); err != nil || !ok {
		return err
	}

	// 1. Only people who may write start a run, on what is still there; a plan that refuses
	// has ended the run. Requests on the pull request from now on are counted on this run and,
	// when it is itself a request that waited, so are the others still waiting
	// (queue/waiting.go).
	if ok, err := a.plan.admit(ctx, a); err != nil || !ok {
		return err
	}
	// The model: the one asked for, or the operator's default; a name the operator does not
	// offer this repository ends the run before it counts against a budget.
	model, err := a.chooseModel()
	if refused := (*runner.ModelRefused)(nil); errors.As(err, &refused) {
		return a.modelRefusedEnd(ctx, refused)
	} else if err != nil {
		return err
	}
	var repoRuns int64 // the settings' runs_per_day, within the operator's ceiling
	if a.settings.RunsPerDay != nil {
		repoRuns = int64(*a.settings.RunsPerDay)
	}
	if err := a.st.pass(ctx, r, repoRuns); err != nil {
		if spent := (*BudgetExceeded)(nil); errors.As(err, &spent) {
			return a.overBudgetEnd(ctx, spent)
		}
		return err
	}

	// 2. The status comment (a follow-up's reply), edited as the run goes.
	if err := a.plan.greet(ctx, a); err != nil {
		return err
	}
	note := a.plan.note(a)
	a.status = newStatusComment(repo, r.CommentID, a.p.cfg.StatusEditInterval, a.log, func(p Progress) Status {
		v := a.view(StateRunning, note)
		v.Progress = &p
		return v
	})

	// 3. The task is what a human sees on GitHub, nothing hidden.
	task, ok, err := a.plan.task(ctx, a)
	if err != nil || !ok {
		return err
	}

	// 4. A fresh host clone for the agent (also when an earlier attempt ran it and only
	// publishing failed: publishing needs it).
	dir, err := os.MkdirTemp(a.p.cfg.WorkDir, "frognano-run-*")
	if err != nil {
		return fmt.Errorf("creating clone directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			a.log.WarnContext(ctx, "removing clone directory", logging.Err(err))
		}
	}()
	spec := RunSpec{RunID: r.ID, RepoDir: dir, Task: task, Owner: r.Owner, Repo: r.Repo,
		InstallationID: r.InstallationID, RepoID: r.RepoID, Model: model, Attempts: a.askedAttempts()}
	baseSHA, baseBranch, err := a.plan.clone(ctx, a, &spec)
	if errors.Is(err, errEnded) {
		return nil
	}
	if err != nil {
		return err
	}

	// 5. The agent, unless an earlier attempt already ran it.
	if !r.AgentDone {
		if err := a.runAgent(ctx, baseSHA, baseBranch, spec); err != nil {
			return err
		}
	} else {
		a.log.InfoContext(ctx, "agent already finished in an earlier attempt; publishing its patch")
	}

	// 6. Publish, unless the run was cancelled meanwhile; the plan ends the run.
	if state, _, err := a.st.current(ctx, r.ID); err != nil {
		return err
	} else if state == StateCancelled {
		return errRunCancelled
	}
	return a.plan.publish(ctx, a, dir)
}

// runAgent records the commit and branch the agent starts from, runs it with spec (its
// progress shown in the status comment) and keeps its outcome in the run's row and in a.run.
func (a *attempt) runAgent(ctx context.Context, baseSHA, baseBranch string, spec RunSpec) error {
	r := a.run
	r.BaseSHA, r.BaseBranch = baseSHA, baseBranch
	if err := a.st.setBase(ctx, r.ID, baseSHA, baseBranch); err != nil {
		return err
	}
	a.status.start(ctx)
	out, err := a.p.cfg.Runner.Run(ctx, spec, a.status.progress)
	a.status.close()
	if err != nil {
		return fmt.Errorf("running agent: %w", err)
	}
	if out == nil {
		return fault.Permanent(errors.New("running agent: runner returned no outcome"))
	}
	if err := a.st.saveOutcome(ctx, r.ID, out); err != nil {
		return err
	}
	r.Patch, r.NoPatch, r.ExitReason, r.Steps, r.ElapsedMS = out.Patch, out.NoPatch, out.ExitReason, out.Steps, out.Elapsed.Milliseconds()
	r.Summary, r.PRBody, r.Headline, r.Check = CleanText(out.Summary), CleanText(out.PRBody), CleanText(out.Headline), out.Check
	return nil
}

// view is the status comment's content for the run as it stands.
func (a *attempt) view(state, note string) Status {
	r := a.run
	v := Status{RunID: r.ID, State: state, Note: note, ExtraRequests: r.ExtraRequests, FollowUp: r.Kind != "" && r.Kind != KindIssue,
		Page: RunPageURL(a.p.cfg.PublicURL, r.ID), Notices: a.notices()}
	if state != StateRunning && state != StateQueued {
		v.ExitReason, v.Steps, v.Elapsed = r.ExitReason, r.Steps, time.Duration(r.ElapsedMS)*time.Millisecond
	}
	return v
}

// skip ends a run that does not go ahead (no comment: nobody asked who may not, or there is
// nothing to answer), with what its record says.
func (a *attempt) skip(ctx context.Context, exitReason, errText string) error {
	_, err := a.st.finish(ctx, a.run.ID, StateSkipped, exitReason, errText, "", 0, nil, nil)
	return err
}

// deny answers a requester without write access with one comment; no run.
func (a *attempt) deny(ctx context.Context, perm string) error {
	r := a.run
	a.log.InfoContext(ctx, "labeler may not start runs", "labeler", r.Labeler, "permission", perm)
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, renderDenied(r.ID, r.Labeler, perm, a.leastPermission(), a.settings.Teams))
		if err != nil {
			return fmt.Errorf("explaining the permission refusal: %w", err)
		}
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	return a.skip(ctx, "permission", "labeler "+r.Labeler+" has "+perm+" permission")
}

// end records the final state with the final status comment and, for a failed run, the
// label's removal (so that adding it again is how to retry), and writes them (record).
func (a *attempt) end(ctx context.Context, state, exitReason, note, prURL string, prNumber int) error {
	r := a.run
	if r.ExitReason == "" {
		r.ExitReason = exitReason
	}
	v := a.view(state, note)
	v.PRURL, v.PRNumber = prURL, prNumber
	if state == StateSucceeded {
		v.Note = r.Headline // the tests before and after, what was left out; not an error
	}
	if state == StateFailed {
		v.Summary = r.Summary
	}
	ok, err := a.record(ctx, state, exitReason, note, prURL, prNumber, &v, state == StateFailed, false)
	if err != nil {
		return err
	}
	if !ok {
		return errRunCancelled
	}
	a.log.InfoContext(ctx, "run finished", "state", state, "exit_reason", exitReason, "pr_url", prURL)
	return nil
}

// finalComment edits the status comment of a run that goes back to queued; a failure to edit
// is logged, not retried: the next attempt edits it again. (An end's comment is in its outbox.)
func (a *attempt) finalComment(ctx context.Context, v Status) {
	if a.repo == nil || a.run.CommentID == 0 {
		return
	}
	if a.status != nil {
		a.status.close()
	}
	if _, extra, err := a.st.current(ctx, a.run.ID); err == nil {
		v.ExtraRequests = extra
	}
	if err := a.repo.EditComment(ctx, a.run.CommentID, RenderStatus(v)); err != nil {
		a.log.WarnContext(ctx, "editing status comment", logging.Err(err))
	}
}
