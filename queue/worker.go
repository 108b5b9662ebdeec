package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/runner"
)

// bookkeepingTimeout bounds the database and GitHub calls made after the
// job's own context has ended (to record why it ended).
const bookkeepingTimeout = 30 * time.Second

// errRunCancelled: the run was cancelled in the database while we worked.
var errRunCancelled = errors.New("run was cancelled")

// BranchName is the only branch frognano pushes for an issue: a function of
// the issue, so a retried or duplicated run updates the same pull request.
func BranchName(issue int) string { return fmt.Sprintf("frognano/issue-%d", issue) }

// fixesLine ends every pull request body: it links the issue (and closes it on merge).
func fixesLine(issue int) string { return fmt.Sprintf("\n\nFixes #%d", issue) }

// allowedPermissions may start a run.
var allowedPermissions = map[string]bool{"admin": true, "maintain": true, "write": true}

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	pool *pgxpool.Pool
	cfg  Config
}

// Timeout overrides River's 1 minute default with the whole-run budget.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return w.cfg.JobTimeout }

// Work performs one attempt of a run; see the package documentation.
func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	log := w.cfg.Logger.With(slog.Int64(AttrRunID, job.Args.RunID), slog.Int64(AttrJobID, job.ID),
		slog.Int64(AttrInstallationID, job.Args.InstallationID),
		slog.String(AttrRepo, job.Args.Owner+"/"+job.Args.Repo), slog.Int(AttrIssue, job.Args.Issue))
	ctx = WithLogger(ctx, log)
	// The job's client inserts the job of a run waiting on this run's pull request when this
	// run ends (store.finish).
	rc, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return river.JobCancel(err)
	}
	st := store{pool: w.pool, river: rc}

	r, err := st.get(ctx, job.Args.RunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if terminal(r.State) {
		log.InfoContext(ctx, "run already finished; nothing to do", "state", r.State)
		return nil
	}
	started, busy, err := st.start(ctx, r, w.cfg.PerInstallationLimit)
	if err != nil {
		return err
	}
	if busy {
		log.InfoContext(ctx, "installation at its concurrency limit; snoozing", "limit", w.cfg.PerInstallationLimit)
		return river.JobSnooze(w.cfg.BusySnooze)
	}
	if !started {
		log.InfoContext(ctx, "run is no longer active; nothing to do")
		return nil
	}
	// The run page follows the run through its events (queue/events.go).
	ev := &eventLog{pool: w.pool, runID: r.ID, log: log, page: RunPageURL(w.cfg.PublicURL, r.ID)}
	ctx = withEvents(ctx, ev)
	ev.add(ctx, EventAttempt, AttemptEvent{Attempt: job.Attempt, MaxAttempts: job.MaxAttempts})
	defer ev.ended(ctx)
	a := &attempt{w: w, job: job, run: r, st: st, log: log}
	return a.settle(ctx, a.do(ctx))
}

// attempt is one try at one run.
type attempt struct {
	w      *runWorker
	job    *river.Job[RunArgs]
	run    *run
	st     store
	log    *slog.Logger
	repo   Repo
	status *statusComment // nil until the status comment exists
}

func (a *attempt) do(ctx context.Context) error {
	r := a.run
	repo, err := a.w.cfg.GitHub.ForRepo(ctx, r.InstallationID, r.RepoID, r.Owner, r.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", r.Owner, r.Repo, err)
	}
	a.repo = repo
	// Without a core permission nothing can be done here: say which, where one can (no retry).
	if missing := repo.Grants().MissingCore(); len(missing) > 0 {
		return a.lacksPermissions(ctx, &githubapp.MissingPermissionsError{Grants: repo.Grants(), Missing: missing})
	}
	if r.Kind == KindFollowUp || r.Kind == KindCI {
		return a.followUp(ctx)
	}

	// 1. Only people who may write can start a run.
	perm, err := repo.Permission(ctx, r.Labeler)
	if err != nil {
		return fmt.Errorf("checking permission of %s: %w", r.Labeler, err)
	}
	if !allowedPermissions[perm] {
		return a.deny(ctx, perm)
	}
	if err := a.st.pass(ctx, r); err != nil {
		return err
	}

	// 2. React and post (or, on a retry, reuse) the status comment.
	if r.CommentID == 0 {
		if err := repo.React(ctx, r.Issue, "eyes"); err != nil {
			return fmt.Errorf("reacting to issue: %w", err)
		}
		id, err := repo.Comment(ctx, r.Issue, renderStatus(a.view(StateRunning, "Starting.")))
		if err != nil {
			return fmt.Errorf("posting status comment: %w", err)
		}
		r.CommentID = id
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	} else if err := repo.EditComment(ctx, r.CommentID, renderStatus(a.view(StateRunning, fmt.Sprintf("Starting attempt %d of %d.", a.job.Attempt, a.job.MaxAttempts)))); err != nil {
		return fmt.Errorf("editing status comment: %w", err)
	}
	a.status = newStatusComment(repo, r.CommentID, a.w.cfg.StatusEditInterval, a.log, func(p Progress) statusView {
		v := a.view(StateRunning, "")
		v.Progress = &p
		return v
	})

	// 3. The task is what a human sees on GitHub, nothing hidden.
	title, body, state, err := repo.Issue(ctx, r.Issue)
	if err != nil {
		return fmt.Errorf("reading issue: %w", err)
	}
	if state == "closed" {
		return a.end(ctx, StateSkipped, "", "The issue is closed.", "", 0)
	}
	title = strings.Join(strings.Fields(SanitizeIssueText(title)), " ")
	task := title + "\n\n" + SanitizeIssueText(body)

	// 4. Run the agent on a fresh host clone (unless a previous attempt
	// already did and only publishing failed).
	dir, err := os.MkdirTemp(a.w.cfg.WorkDir, "frognano-run-*")
	if err != nil {
		return fmt.Errorf("creating clone directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			a.log.WarnContext(ctx, "removing clone directory", "error", err)
		}
	}()
	headSHA, defaultBranch, err := repo.Clone(ctx, dir)
	if err != nil {
		return fmt.Errorf("cloning repository: %w", err)
	}
	if !r.AgentDone {
		if err := a.runAgent(ctx, headSHA, defaultBranch, RunSpec{RunID: r.ID, RepoDir: dir, Task: task, Owner: r.Owner, Repo: r.Repo,
			InstallationID: r.InstallationID, RepoID: r.RepoID, Issue: r.Issue, Notices: a.notices()}); err != nil {
			return err
		}
	} else {
		a.log.InfoContext(ctx, "agent already finished in an earlier attempt; publishing its patch")
	}

	// 5. Publish, unless the run was cancelled meanwhile.
	if state, _, err := a.st.state(ctx, r.ID); err != nil {
		return err
	} else if state == StateCancelled {
		return errRunCancelled
	}
	if r.ExitReason == runner.ExitSetupFailed {
		note := "The repository's setup script (.frognano/setup.sh) failed, so the model was not called. " +
			"Its log is kept with the run: `frognano runs show " + strconv.FormatInt(r.ID, 10) + " --setup-log`."
		return a.end(ctx, StateFailed, r.ExitReason, note, "", 0)
	}
	if len(r.Patch) == 0 {
		note := "The agent finished without changing any file, so there is no pull request."
		return a.end(ctx, StateFailed, r.ExitReason, note, "", 0)
	}
	// The runner rendered the whole body, Fixes line included, within GitHub's limit; it
	// is not cut here. A body stored before the runner added the line (rendered 100
	// characters short of the limit) gets it now.
	prBody := r.PRBody
	if fixes := fixesLine(r.Issue); !strings.HasSuffix(prBody, fixes) {
		prBody += fixes
	}
	url, number, err := repo.Publish(ctx, githubapp.PublishInput{
		Dir: dir, BaseSHA: r.BaseSHA, Branch: BranchName(r.Issue), BaseBranch: r.BaseBranch,
		// One line with its own limit, never markdown; a squash merge makes it the commit's title,
		// so neither it nor the commit message carries a reference of the issue's author.
		Title:         clip.Bytes("frognano: "+githubapp.InertReferences(title), 250),
		Body:          prBody,
		CommitMessage: fmt.Sprintf("Fix #%d: %s\n\nWritten by frognano run %d.", r.Issue, clip.Bytes(githubapp.InertReferences(title), 200), r.ID),
		Patch:         r.Patch, IssueNumber: r.Issue,
		Check: r.Check,
	})
	if err != nil {
		return fmt.Errorf("publishing pull request: %w", err)
	}
	return a.end(ctx, StateSucceeded, r.ExitReason, "", url, number)
}

// view is the status comment's content for the run as it stands.
// runAgent records the commit and branch the agent starts from, runs it with spec (its
// progress shown in the status comment) and keeps its outcome in the run's row and in a.run.
func (a *attempt) runAgent(ctx context.Context, baseSHA, baseBranch string, spec RunSpec) error {
	r := a.run
	r.BaseSHA, r.BaseBranch = baseSHA, baseBranch
	if err := a.st.setBase(ctx, r.ID, baseSHA, baseBranch); err != nil {
		return err
	}
	a.status.start(ctx)
	out, err := a.w.cfg.Runner.Run(ctx, spec, a.status.progress)
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
	r.Patch, r.ExitReason, r.Steps, r.ElapsedMS = out.Patch, out.ExitReason, out.Steps, out.Elapsed.Milliseconds()
	r.Summary, r.PRBody, r.Headline, r.Check = cleanText(out.Summary), cleanText(out.PRBody), cleanText(out.Headline), out.Check
	return nil
}

func (a *attempt) view(state, note string) statusView {
	r := a.run
	v := statusView{RunID: r.ID, State: state, Note: note, ExtraRequests: r.ExtraRequests, FollowUp: r.Kind != "" && r.Kind != KindIssue,
		Page: RunPageURL(a.w.cfg.PublicURL, r.ID), Notices: a.notices()}
	if state != StateRunning && state != StateQueued {
		v.ExitReason, v.Steps, v.Elapsed = r.ExitReason, r.Steps, time.Duration(r.ElapsedMS)*time.Millisecond
	}
	return v
}

// deny answers a labeler without write access with one comment; no run.
func (a *attempt) deny(ctx context.Context, perm string) error {
	r := a.run
	a.log.InfoContext(ctx, "labeler may not start runs", "labeler", r.Labeler, "permission", perm)
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, renderDenied(r.ID, r.Labeler, perm))
		if err != nil {
			return fmt.Errorf("explaining the permission refusal: %w", err)
		}
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	if _, err := a.st.finish(ctx, r.ID, StateSkipped, "permission", "labeler "+r.Labeler+" has "+perm+" permission", "", 0); err != nil {
		return err
	}
	return nil
}

// end records the final state and writes the final status comment.
func (a *attempt) end(ctx context.Context, state, exitReason, note, prURL string, prNumber int) error {
	r := a.run
	if r.ExitReason == "" {
		r.ExitReason = exitReason
	}
	ok, err := a.st.finish(ctx, r.ID, state, exitReason, note, prURL, prNumber)
	if err != nil {
		return err
	}
	if !ok {
		return errRunCancelled
	}
	a.log.InfoContext(ctx, "run finished", "state", state, "exit_reason", exitReason, "pr_url", prURL)
	v := a.view(state, note)
	v.PRURL, v.PRNumber = prURL, prNumber
	if state == StateSucceeded {
		v.Note = r.Headline // the tests before and after, what was left out; not an error
	}
	if state == StateFailed {
		v.Summary = r.Summary
		a.removeLabel(ctx)
	}
	a.finalComment(ctx, v)
	return nil
}

// removeLabel takes the label off the issue of a failed run, so that adding it again is how
// to retry. A failure to remove it is logged: the run's record is what counts.
func (a *attempt) removeLabel(ctx context.Context) {
	if a.repo == nil || a.w.cfg.Label == "" || a.run.Kind != KindIssue {
		return
	}
	if err := a.repo.RemoveLabel(ctx, a.run.Issue, a.w.cfg.Label); err != nil {
		a.log.WarnContext(ctx, "removing the label of a failed run", "error", githubapp.Redact(err.Error()))
	}
}

// finalComment edits the status comment; a failure to edit is logged, not
// retried: the run's record in the database is the source of truth.
func (a *attempt) finalComment(ctx context.Context, v statusView) {
	if a.repo == nil || a.run.CommentID == 0 {
		return
	}
	if a.status != nil {
		a.status.close()
	}
	if _, extra, err := a.st.state(ctx, a.run.ID); err == nil {
		v.ExtraRequests = extra
	}
	if err := a.repo.EditComment(ctx, a.run.CommentID, renderStatus(v)); err != nil {
		a.log.WarnContext(ctx, "editing status comment", "error", githubapp.Redact(err.Error()))
	}
}

// settle decides what an attempt's error means: cancelled, timed out,
// interrupted by shutdown, retried (transient) or failed for good.
func (a *attempt) settle(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	if a.status != nil {
		a.status.close()
	}
	r, cause := a.run, context.Cause(ctx)
	msg := githubapp.Redact(err.Error())
	limitNote := a.rateLimitNote(err)
	switch {
	case errors.Is(err, errRunCancelled) || errors.Is(cause, rivertype.ErrJobCancelledRemotely):
		a.log.InfoContext(bg, "run cancelled")
		if err := a.st.cancel(bg, r.ID); err != nil {
			a.log.ErrorContext(bg, "recording cancellation", "error", err)
		}
		note := "The label was removed or the issue was closed."
		if r.Kind != KindIssue {
			note = "Stopped: the pull request was closed or a reviewer asked frognano to stop."
		}
		a.finalComment(bg, a.view(StateCancelled, note))
		return river.JobCancel(err)

	case ctx.Err() != nil && errors.Is(cause, context.DeadlineExceeded):
		note := fmt.Sprintf("The run exceeded its time budget of %s.", a.w.cfg.JobTimeout)
		a.log.WarnContext(bg, "run timed out", "timeout", a.w.cfg.JobTimeout)
		a.failed(bg, "max_time", note, msg)
		return river.JobCancel(err)

	case ctx.Err() != nil:
		// The worker is shutting down. Returning an error that wraps
		// context.Canceled lets River make the job available again
		// without spending an attempt.
		a.log.InfoContext(bg, "run interrupted by shutdown; it will resume")
		if err := a.st.requeue(bg, r.ID, "interrupted by a worker shutdown"); err != nil {
			a.log.ErrorContext(bg, "requeueing run", "error", err)
		}
		a.finalComment(bg, a.view(StateQueued, "The worker restarted; this run will resume."))
		return fmt.Errorf("run interrupted: %w", ctx.Err())

	case limitNote != "":
		// A retry would meet the same limit: say so once instead of retrying into it.
		a.refused(bg, ExitGitHubRateLimited, limitNote, msg)
		return river.JobCancel(err)

	case fault.IsTransient(err) && a.job.Attempt < a.job.MaxAttempts:
		a.log.WarnContext(bg, "transient failure; will retry", "error", msg, "attempt", a.job.Attempt)
		if err := a.st.requeue(bg, r.ID, msg); err != nil {
			a.log.ErrorContext(bg, "requeueing run", "error", err)
		}
		a.finalComment(bg, a.view(StateQueued, fmt.Sprintf("Attempt %d of %d hit a temporary infrastructure problem; retrying.", a.job.Attempt, a.job.MaxAttempts)))
		return err

	case !fault.IsTransient(err) && explained(err):
		// GitHub refused for good: its answer, worded once (githubapp.Explain), is the note.
		reason, _ := githubapp.Explain(err)
		a.refused(bg, ExitGitHubRefused, reason, msg)
		return river.JobCancel(err)

	default:
		a.log.ErrorContext(bg, "run failed", "error", msg, "attempt", a.job.Attempt)
		a.failed(bg, "", "The run failed because of an infrastructure error (details are in the service log and the run record).", msg)
		return river.JobCancel(err)
	}
}

// explained reports whether err holds an answer of GitHub's that githubapp.Explain words.
func explained(err error) bool {
	_, ok := githubapp.Explain(err)
	return ok
}

func (a *attempt) failed(ctx context.Context, exitReason, note, errText string) {
	if exitReason != "" {
		a.run.ExitReason = exitReason
	}
	if _, err := a.st.finish(ctx, a.run.ID, StateFailed, exitReason, errText, "", 0); err != nil {
		a.log.ErrorContext(ctx, "recording failure", "error", err)
	}
	a.removeLabel(ctx)
	a.finalComment(ctx, a.view(StateFailed, note))
}
