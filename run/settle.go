package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// settle decides what an attempt's error means: cancelled, timed out, interrupted by
// shutdown, retried (transient) or failed for good. It records that in the run and its
// status comment and returns what the queue acts on (Work's contract).
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
	msg := githubapp.RedactRun(err.Error())
	limitNote := a.rateLimitNote(err)
	remote := a.p.cfg.RemoteCancel != nil && errors.Is(cause, a.p.cfg.RemoteCancel)
	switch {
	case errors.Is(err, errRunCancelled) || remote:
		a.log.InfoContext(bg, "run cancelled")
		if a.status != nil {
			a.status.close()
		}
		v := a.view(StateCancelled, a.plan.cancelled())
		o := a.outboxOf(&v, false, false)
		ended, cerr := a.st.cancel(bg, r.ID, o)
		switch {
		case cerr != nil:
			a.log.ErrorContext(bg, "recording cancellation", logging.Err(cerr))
		case ended && o != nil:
			a.flush(bg)
		case !ended && a.repo != nil:
			// Cancelled by the queue: an unlabel or a close recorded the comment's final content
			// in the run's outbox and queued its writing (queue/intake.go), which this writes
			// now; a canceller that recorded none (a stop request) leaves it to this worker.
			wrote, werr := a.p.writeOutbox(bg, a.repo, r.ID, r.Issue)
			if werr != nil {
				a.log.WarnContext(bg, "writing the run's end to GitHub; it is left for the next writer", logging.Err(werr))
			} else if !wrote {
				a.finalComment(bg, v)
			}
		}
		return final(err)

	case ctx.Err() != nil && errors.Is(cause, context.DeadlineExceeded):
		a.log.WarnContext(bg, "run timed out", "timeout", a.p.cfg.JobTimeout)
		a.failed(bg, "max_time", noteTimedOut(a.p.cfg.JobTimeout), msg)
		return final(err)

	case ctx.Err() != nil:
		// The worker is shutting down. Returning an error that wraps
		// context.Canceled lets the queue (River) make the job available again
		// without spending an attempt.
		a.log.InfoContext(bg, "run interrupted by shutdown; it will resume")
		if err := a.st.requeue(bg, r.ID, "interrupted by a worker shutdown"); err != nil {
			a.log.ErrorContext(bg, "requeueing run", logging.Err(err))
		}
		a.finalComment(bg, a.view(StateQueued, noteWorkerRestarted))
		return fmt.Errorf("run interrupted: %w", ctx.Err())

	case limitNote != "":
		// A retry would meet the same limit: say so once instead of retrying into it.
		a.refused(bg, ExitGitHubRateLimited, limitNote, msg)
		return final(err)

	case fault.IsTransient(err) && a.try.Attempt < a.try.MaxAttempts:
		a.log.WarnContext(bg, "transient failure; will retry", logging.Err(err), "attempt", a.try.Attempt)
		if err := a.st.requeue(bg, r.ID, msg); err != nil {
			a.log.ErrorContext(bg, "requeueing run", logging.Err(err))
		}
		a.finalComment(bg, a.view(StateQueued, noteRetrying(a.try.Attempt, a.try.MaxAttempts)))
		return err

	case !fault.IsTransient(err) && explained(err):
		// GitHub refused for good: its answer, worded once (githubapp.Explain), is the note.
		reason, _ := githubapp.Explain(err)
		a.refused(bg, ExitGitHubRefused, reason, msg)
		return final(err)

	default:
		a.log.ErrorContext(bg, "run failed", logging.Err(err), "attempt", a.try.Attempt)
		a.failed(bg, "", noteInfrastructure, msg)
		return final(err)
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
	v := a.view(StateFailed, note)
	if _, err := a.record(ctx, StateFailed, exitReason, errText, "", 0, &v, true, false); err != nil {
		a.log.ErrorContext(ctx, "recording failure", logging.Err(err))
	}
}
