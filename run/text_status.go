package run

// This file words the status comment: the one comment a run keeps on its issue (on a pull
// request, a follow-up's reply to the request, which is the same comment), from its state
// line to its progress, its note and the link to the run's page. Every note it carries about
// the run (starting, retrying, why it ended, what to do next) is a name below, so that a
// sentence GitHub shows is found here. Refusals are worded in text_refusals.go, notices in
// text_notices.go, replies in text_replies.go and the pull request in text_pullrequest.go;
// internal/layout's TestGitHubTextInTextFiles fails on a sentence that reaches GitHub from
// anywhere else.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/sandbox"
)

// statusReserve is the most that the status comment adds around the runner's summary
// (state line, note or headline, progress, exit line); the runner renders the summary
// within GitHub's limit minus this, so the comment never needs cutting.
const statusReserve = 8000

// maxProgressCalls is the most tool calls of one step the status comment shows.
const maxProgressCalls = 10

// RenderStatus renders the status comment (or a follow-up's reply), redacted, within
// GitHub's comment limit. It never cuts markdown: should the comment be over the limit, the summary is left out (it
// is kept with the run) and the comment says so.
func RenderStatus(v Status) string {
	if s := githubapp.RedactRun(composeStatus(v)); utf8.RuneCountInString(s) <= report.GitHubBodyLimit || v.Summary == "" {
		return s
	}
	v.Summary = fmt.Sprintf("_The summary of this run is too long for a comment; `frognano runs show %d --report` prints it._", v.RunID)
	return githubapp.RedactRun(composeStatus(v))
}

func composeStatus(v Status) string {
	var b strings.Builder
	b.WriteString(statusMarker(v.RunID) + "\n")
	switch v.State {
	case StateQueued:
		fmt.Fprintf(&b, "⏳ frognano run %d is queued.", v.RunID)
	case StateRunning:
		fmt.Fprintf(&b, "🔧 frognano run %d is working on this %s.", v.RunID, pick(v.FollowUp, "request", "issue"))
		if p := v.Progress; p != nil {
			if text := renderProgress(*p); text != "" {
				b.WriteString("\n\n" + text)
			}
		}
	case StateSucceeded:
		if v.FollowUp {
			fmt.Fprintf(&b, "✅ frognano run %d pushed a new commit to this pull request: #%d (%s).", v.RunID, v.PRNumber, v.PRURL)
			break
		}
		fmt.Fprintf(&b, "✅ frognano run %d opened a draft pull request: #%d (%s).", v.RunID, v.PRNumber, v.PRURL)
	case StateFailed:
		if v.Abandoned {
			fmt.Fprintf(&b, "❌ frognano stopped working on run %d before it finished.", v.RunID)
			break
		}
		fmt.Fprintf(&b, "❌ frognano run %d ended %s.", v.RunID, pick(v.FollowUp, "without a new commit", "without a pull request"))
	case StateCancelled:
		fmt.Fprintf(&b, "🛑 frognano run %d was cancelled.", v.RunID)
	case StateSkipped:
		if v.Steps > 0 { // the agent worked, then what it made had nowhere to go
			fmt.Fprintf(&b, "frognano run %d stopped %s.", v.RunID, pick(v.FollowUp, "without a new commit", "without a pull request"))
			break
		}
		fmt.Fprintf(&b, "frognano run %d was not started.", v.RunID)
	}
	if v.Note != "" {
		b.WriteString("\n\n" + v.Note)
	}
	for _, n := range v.Notices {
		b.WriteString("\n\nℹ️ " + n)
	}
	if v.ExitReason != "" || v.Steps > 0 {
		fmt.Fprintf(&b, "\n\nExit reason: %s; steps: %d; time: %s.", report.CodeSpan(v.ExitReason, 40), v.Steps, v.Elapsed.Round(time.Second))
	}
	if v.Summary != "" {
		b.WriteString("\n\n" + v.Summary)
	}
	switch {
	case v.ExtraRequests > 0 && v.FollowUp:
		// A review and its line comments arrive as several requests; so does a second comment.
		fmt.Fprintf(&b, "\n\n_%d more request(s) on this pull request arrived while this run was active; no second run was started (ask again once it has ended)._", v.ExtraRequests)
	case v.ExtraRequests > 0:
		fmt.Fprintf(&b, "\n\n_%d more request(s) for a run on this issue (the label applied again, a mention) arrived while this run was active; no second run was started._", v.ExtraRequests)
	}
	b.WriteString(pageLine(v.Page))
	return b.String()
}

// renderProgress shows the latest step: each tool call with its argument exactly as the
// model wrote it (report.RenderCall), or that the model gave its final answer; and, above it,
// that the run waits for a free sandbox or for the model server, while it does.
func renderProgress(p Progress) string {
	var parts []string
	if p.SandboxWait != "" {
		parts = append(parts, "⏳ Waiting for a free sandbox "+p.SandboxWait+".")
	}
	if p.Waiting != "" {
		parts = append(parts, "⏳ Waiting for the model server: "+p.Waiting+".")
	}
	if p.Step > 0 {
		parts = append(parts, renderStep(p))
	}
	return strings.Join(parts, "\n\n")
}

func renderStep(p Progress) string {
	elapsed := p.Elapsed.Round(time.Second)
	if len(p.Calls) == 0 {
		return fmt.Sprintf("Step %d: the model gave its final answer (%s elapsed).", p.Step, elapsed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d (%s elapsed):\n", p.Step, elapsed)
	for i, c := range p.Calls {
		if i == maxProgressCalls {
			fmt.Fprintf(&b, "\n_and %d more tool calls_\n", len(p.Calls)-i)
			break
		}
		b.WriteString("\n" + report.RenderCall(c.Tool, c.Arguments, 300, githubapp.Redact))
	}
	return strings.TrimRight(b.String(), "\n")
}

// statusMarker begins every comment of run id (RenderStatus, renderDenied): the writer of a
// Post finds the run's comment by it.
func statusMarker(id int64) string { return fmt.Sprintf("<!-- frognano:run:%d -->", id) }

// pageLine is the paragraph that links a comment or body to the run's page; "" without one.
func pageLine(page string) string {
	if page == "" {
		return ""
	}
	return "\n\nThe run's steps, patch and tests: " + page
}

// modelWaitText is what the status comment says the run waits for at the model server: the
// latest wait (leaf.ModelWait.String), and how many attempts wait when more than one does.
func modelWaitText(latest string, attempts int) string {
	if attempts > 1 {
		latest += fmt.Sprintf(" (%d attempts are waiting)", attempts)
	}
	return latest
}

// sandboxWaitText is which sandbox of the run waits for a free slot on this worker (w, the
// latest), and how many of the run's sandboxes wait when more than one does.
func sandboxWaitText(w sandbox.SlotWait, sandboxes int) string {
	s := fmt.Sprintf("for %s (%d of %d in use on this worker", w.For(), w.InUse, w.Cap)
	if sandboxes > 1 {
		s += fmt.Sprintf("; %d sandboxes of this run are waiting", sandboxes)
	}
	return s + ")"
}

// The notes of the status comment: one factual line under its state line.
const (
	// noteStarting: the issue run's first status comment.
	noteStarting = "Starting."
	// noteIssueClosed: the issue was closed before the run read it.
	noteIssueClosed = "The issue is closed."
	// noteIssueCancelled: an issue run was cancelled (its label removed, the issue closed).
	noteIssueCancelled = "The label was removed or the issue was closed."
	// notePullCancelled: a follow-up was cancelled (its pull request closed, or a stop request).
	notePullCancelled = "Stopped: the pull request was closed or a reviewer asked frognano to stop."
	// noteWorkerRestarted: the worker shut down mid-run; the run is queued again.
	noteWorkerRestarted = "The worker restarted; this run will resume."
	// noteInfrastructure: a failure that is neither GitHub's refusal nor worth a retry.
	noteInfrastructure = "The run failed because of an infrastructure error (details are in the service log and the run record)."
	// noteBranchMoved: a follow-up's branch moved while the run worked.
	noteBranchMoved = "Someone pushed to this pull request's branch while the run worked, so nothing was pushed " +
		"(frognano never overwrites a reviewer's commits). Ask again to start from the branch's new head."
)

// noteAttempt: a retry of the issue run starts.
func noteAttempt(attempt, maxAttempts int) string {
	return fmt.Sprintf("Starting attempt %d of %d.", attempt, maxAttempts)
}

// noteRetrying: an attempt met a transient failure; the run is queued again.
func noteRetrying(attempt, maxAttempts int) string {
	return fmt.Sprintf("Attempt %d of %d hit a temporary infrastructure problem; retrying.", attempt, maxAttempts)
}

// noteTimedOut: the run exceeded FROGNANO_JOB_TIMEOUT.
func noteTimedOut(budget time.Duration) string {
	return fmt.Sprintf("The run exceeded its time budget of %s.", budget)
}

// noteSetupFailed: the repository's setup script failed for run id, before any model call.
func noteSetupFailed(id int64) string {
	return "The repository's setup script (.frognano/setup.sh) failed, so the model was not called. " +
		"Its log is kept with the run: `frognano runs show " + strconv.FormatInt(id, 10) + " --setup-log`."
}

// noteEnvironmentRefused says that the seal check refused the environment setup built (it
// holds a value the operator passes setup), so the model was not called.
func noteEnvironmentRefused(id int64) string {
	return "frognano refused the environment the repository's setup script (.frognano/setup.sh) built: it holds a value the operator " +
		"passes setup (the summary below says where), so the model was not called. " +
		"The setup log is kept with the run: `frognano runs show " + strconv.FormatInt(id, 10) + " --setup-log`."
}

// What follows from a run's having no patch (noPatchNote): an issue run's, a follow-up's.
const (
	soNoPullRequest = ", so there is no pull request."
	soNothingPushed = ", so nothing was pushed."
)

// noPatchNote says why run r has nothing to publish, from the runner's typed reason
// (runner.Result.NoPatch), never from its notes' text; so is what follows from it
// (soNoPullRequest, soNothingPushed). The summary under it in the status comment says more.
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

// followUpNote says what a reviewer's follow-up answers (requestURL: the request's comment,
// "" unknown), for its reply.
func followUpNote(requestURL, requester string) string {
	where := "a comment"
	if requestURL != "" {
		where = "[a comment](" + requestURL + ")"
	}
	return fmt.Sprintf("Follow-up run for %s by @%s: a new commit on this pull request's branch.", where, requester)
}

// ciFollowUpNote says what a CI follow-up answers (CI failed on sha), for its reply.
func ciFollowUpNote(sha string) string {
	return fmt.Sprintf("Follow-up run triggered by CI: the repository's checks failed on %s, the head of this pull request. "+
		"It pushes a new commit on this branch; CI may start at most this many such runs per pull request (`FROGNANO_CI_FOLLOWUPS`).", report.CodeSpan(sha, 64))
}

// ciNote keeps saying, in a CI follow-up's final reply, that CI triggered it.
func ciNote(sha, note string) string {
	return strings.TrimSpace(fmt.Sprintf("Triggered by CI: the repository's checks failed on %s. %s", report.CodeSpan(sha, 64), note))
}

// notePullClosed: a follow-up found its pull request closed before it started.
func notePullClosed(pr githubapp.PullRequest) string {
	return closedNote(pr, "The pull request is closed", "nothing was done.")
}

// notePullClosedWhileWorking: a follow-up's pull request was closed while the run worked.
func notePullClosedWhileWorking(pr githubapp.PullRequest) string {
	return closedNote(pr, "The pull request was closed while the run worked", "nothing was pushed.")
}

// closedNote says that a follow-up's pull request is closed (what), so that nothing more was
// done (so), and, when its branch is gone, that a person deleted it and what brings it back.
func closedNote(pr githubapp.PullRequest, what, so string) string {
	if !pr.HeadGone {
		return what + ", so " + so
	}
	return fmt.Sprintf("%s: its branch %s was deleted (GitHub closes a pull request whose branch is deleted), so %s %s",
		what, report.CodeSpan(pr.HeadRef, 255), so, githubapp.RestoreBranchAdvice)
}

// StoppedBeforeStart is the note of a follow-up that a stop request (by requester) cancelled
// before it started: the queue's stop job edits its reply.
func StoppedBeforeStart(requester string) string {
	return fmt.Sprintf("Stopped before it started: @%s asked frognano to stop.", requester)
}

// DeadRunNote is the status comment's note of a run the queue's cleanup ended because its
// job had ended without ending it, in comments that an earlier frognano queued (RewriteStatus
// with dead); EndAbandoned says more.
const DeadRunNote = "This run's worker stopped without finishing it (it died on its last try, or could not record the end). " +
	"It was ended so that the requests waiting behind it could run; ask again to retry it."

// abandonedNote says why frognano stopped working on a run of kind whose job can no longer
// run it, and how to retry (byLabel: the label started it, and adding it again retries);
// published: it may have opened or updated its pull request first.
func abandonedNote(kind string, byLabel, published bool) string {
	note := "Its worker stopped before the run could end (the process died on its last try, or could not record how the run ended), " +
		"and no other worker will take it up."
	if published {
		note += pick(kind == KindIssue, " It may have opened or updated a draft pull request for this issue before it stopped; a new run updates that one.",
			" It may have pushed a commit to this pull request before it stopped.")
	}
	return note + pick(byLabel, " Add the label again to retry.", " Ask again with a new comment to retry.")
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// noteBaseMissing ends a run whose requester asked for a base branch that is not on GitHub.
// noteBaseOurs: the base asked for (base=, the settings' base_branch) or the base of the pull
// request is one of frognano's own branches (IsOwnBranch).
func noteBaseOurs(base string) string {
	return fmt.Sprintf("The base branch %s is frognano's own branch, which a patch wrote, so the run did not start: a run based on it would take its checks' settings and its setup script from that patch. Ask on its pull request for a follow-up, or ask again with another branch as `base=`.",
		report.CodeSpan(base, 260))
}

func noteBaseMissing(base string) string {
	return fmt.Sprintf("There is no branch %s in this repository, so the run did not start. Ask again with an existing branch as `base=`, or without it for the default branch.",
		report.CodeSpan(base, 260))
}
