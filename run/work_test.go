package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/runner"
)

func TestHappyPathPublishesOnceOnIssueBranch(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)

	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	r := p.Row(t, id)
	if r.State != run.StateSucceeded || r.PRURL == "" || r.PRNumber != 77 || r.Steps != 12 || r.ExitReason != "agent" {
		t.Errorf("run row = %+v, want succeeded with PR 77", r)
	}
	if !r.HasTrajectory || r.Report != "reporttext" {
		t.Errorf("trajectory stored %v, report %q: want the trajectory and the report without NUL", r.HasTrajectory, r.Report)
	}
	repo := p.Repo
	publishes := repo.Publishes()
	if len(publishes) != 1 {
		t.Fatalf("Publish called %d times, want 1", len(publishes))
	}
	in := publishes[0]
	if in.Branch != "frognano/issue-7" || in.BaseBranch != "main" || in.IssueNumber != 7 || in.BaseSHA == "" {
		t.Errorf("PublishInput = %+v", in)
	}
	if !strings.HasSuffix(in.Body, "\n\nFixes #7") || !strings.HasPrefix(in.Body, "This fixes the pager.") {
		t.Errorf("PR body = %q", in.Body)
	}
	if reactions := repo.Reactions(); len(reactions) != 1 || reactions[0] != "eyes" {
		t.Errorf("reactions = %v, want [eyes]", reactions)
	}
	if comments := repo.Comments(); len(comments) != 1 {
		t.Fatalf("posted %d comments, want 1", len(comments))
	}
	last := repo.LastEdit()
	if last.ID != r.CommentID || !strings.Contains(last.Body, "#77") || !strings.Contains(last.Body, "pull/77") {
		t.Errorf("final edit = %+v, want comment %d linking the PR", last, r.CommentID)
	}
	// The task is sanitized: the hidden HTML comment never reaches the runner.
	spec := p.Runner.Specs()[0]
	if strings.Contains(spec.Task, "secret") || !strings.HasPrefix(spec.Task, "Pager skips the last page\n\n") {
		t.Errorf("task = %q", spec.Task)
	}
	// The host clone is removed after the run.
	if _, err := os.Stat(repo.CloneDirs()[0]); !os.IsNotExist(err) {
		t.Errorf("clone dir %s still exists (err %v)", repo.CloneDirs()[0], err)
	}
}

func TestLabelerWithoutWriteGetsOneCommentAndNoRun(t *testing.T) {
	t.Parallel()
	for _, perm := range []string{"read", "triage", "none", ""} {
		t.Run("Perm"+perm, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Repo.Perm = perm
			id := p.Label(t, 7)
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatalf("Work: %v", r)
			}
			if got := p.Row(t, id).State; got != run.StateSkipped {
				t.Errorf("state = %s, want skipped", got)
			}
			if len(p.Repo.Comments()) != 1 || !strings.Contains(p.Repo.Comments()[0], "@maintainer") {
				t.Errorf("comments = %q, want one explanation to @maintainer", p.Repo.Comments())
			}
			if p.Runner.Calls() != 0 || p.Repo.Clones() != 0 || len(p.Repo.Reactions()) != 0 || len(p.Repo.Publishes()) != 0 {
				t.Errorf("a denied request did work: runner %d clones %d reactions %v", p.Runner.Calls(), p.Repo.Clones(), p.Repo.Reactions())
			}
			// Working the job again (a redelivered job) changes nothing.
			if r := p.Work(t, id, 2); !r.Completed() {
				t.Fatal(r)
			}
			if len(p.Repo.Comments()) != 1 {
				t.Errorf("second attempt posted again: %d comments", len(p.Repo.Comments()))
			}
		})
	}
}

func TestTransientErrorsRetryAndReuseTheStatusComment(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Repo.FailNext("Clone", runtest.Flaky("cloning"))

	if r := p.Work(t, id, 1); !r.Retried() {
		t.Fatalf("attempt 1 = %v, want a retryable error", r)
	}
	if r := p.Row(t, id); r.State != run.StateQueued || !strings.Contains(r.Error, "connection reset") {
		t.Errorf("after transient failure: %+v, want queued with the error", r)
	}
	if r := p.Work(t, id, 2); !r.Completed() {
		t.Fatalf("attempt 2: %v", r)
	}
	r := p.Row(t, id)
	if r.State != run.StateSucceeded || r.Attempts != 2 {
		t.Errorf("after retry: %+v, want succeeded after 2 attempts", r)
	}
	if len(p.Repo.Comments()) != 1 || len(p.Repo.Reactions()) != 1 {
		t.Errorf("comments %d reactions %d, want the status comment edited, not re-posted", len(p.Repo.Comments()), len(p.Repo.Reactions()))
	}
	for _, e := range p.Repo.Edits() {
		if e.ID != r.CommentID {
			t.Errorf("edited comment %d, want only %d", e.ID, r.CommentID)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		method    string
		err       error
		attempt   int
		wantRetry bool
		wantState string
	}{
		{"TransientPermission", "Permission", runtest.Flaky("permission"), 1, true, run.StateQueued},
		{"TransientOnLastAttempt", "Permission", runtest.Flaky("permission"), runtest.MaxAttempts, false, run.StateFailed},
		{"PermanentIssue", "Issue", errors.New("404 Not Found"), 1, false, run.StateFailed},
		{"PermanentClone", "Clone", errors.New("repository is empty"), 1, false, run.StateFailed},
		{"TransientMark", "Comment", fault.Transient(errors.New("502 Bad Gateway")), 1, true, run.StateQueued},
		{"PermanentMark", "Comment", fault.Permanent(errors.New("422 Unprocessable")), 1, false, run.StateFailed},
		{"Cancelled", "Clone", context.Canceled, 1, false, run.StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			id := p.Label(t, 7)
			p.Repo.FailNext(tt.method, tt.err)
			r := p.Work(t, id, tt.attempt)
			if r.Completed() {
				t.Fatal("the attempt succeeded, want an error")
			}
			// Only the queue's retry counts: a failure that is not retried is final (the queue cancels the job).
			if r.Retried() != tt.wantRetry || r.Retried() == r.Final() {
				t.Errorf("attempt = %v: retried %v, want %v", r, r.Retried(), tt.wantRetry)
			}
			if got := p.Row(t, id).State; got != tt.wantState {
				t.Errorf("state = %s, want %s", got, tt.wantState)
			}
			if len(p.Repo.Publishes()) != 0 {
				t.Error("published after a failure")
			}
		})
	}
}

func TestRunnerInfrastructureFailure(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return nil, errors.New("docker: no such image frognano-sandbox")
	})
	if r := p.Work(t, id, 1); !r.Final() {
		t.Fatalf("attempt = %v, want a permanent failure", r)
	}
	r := p.Row(t, id)
	if r.State != run.StateFailed || !strings.Contains(r.Error, "no such image") {
		t.Errorf("run = %+v", r)
	}
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "ended without a pull request") || strings.Contains(body, "no such image") {
		t.Errorf("final comment = %q: want a factual failure without internal error text", body)
	}
}

func TestPublishRetryDoesNotRerunTheAgent(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Repo.FailNext("Publish", runtest.Flaky("pushing"))
	if r := p.Work(t, id, 1); !r.Retried() {
		t.Fatalf("attempt 1 = %v, want retryable", r)
	}
	if r := p.Row(t, id); !r.AgentDone || r.State != run.StateQueued {
		t.Fatalf("after failed publish: %+v, want the outcome kept and the run queued", r)
	}
	if r := p.Work(t, id, 2); !r.Completed() {
		t.Fatalf("attempt 2: %v", r)
	}
	if n := p.Runner.Calls(); n != 1 {
		t.Errorf("runner called %d times, want 1", n)
	}
	if len(p.Repo.Publishes()) != 2 {
		t.Fatalf("publish called %d times, want 2", len(p.Repo.Publishes()))
	}
	p1, p2 := p.Repo.Publishes()[0], p.Repo.Publishes()[1]
	if p1.Branch != p2.Branch || p1.BaseSHA != p2.BaseSHA || string(p1.Patch) != string(p2.Patch) {
		t.Errorf("retry published differently: %+v vs %+v", p1, p2)
	}
	if got := p.Row(t, id).State; got != run.StateSucceeded {
		t.Errorf("state = %s", got)
	}
}

func TestEmptyPatchEndsWithoutPR(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.Patch, o.NoPatch, o.ExitReason, o.Summary = nil, runner.NoPatchUnchanged, "max_turns", "Tried 100 steps; tests still fail in pager_test.go."
		return o, nil
	})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	r := p.Row(t, id)
	if r.State != run.StateFailed || r.ExitReason != "max_turns" {
		t.Errorf("run = %+v", r)
	}
	if len(p.Repo.Publishes()) != 0 {
		t.Error("published an empty patch")
	}
	body := p.Repo.LastEdit().Body
	for _, want := range []string{"without a pull request", "max_turns", "Tried 100 steps", "without changing any file"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
}

// TestRefusedPatchSaysSo: a patch the runner refused (here for a secret) ends the run
// without a pull request, and the status comment says the patch was refused, from the
// outcome's typed reason, not that the agent changed nothing.
func TestRefusedPatchSaysSo(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := runtest.GoodOutcome()
		o.Patch, o.NoPatch, o.Summary = nil, runner.NoPatchRefused, "The patch was refused: it holds what looks like a secret: private-key in \"deploy/key.pem\" line 1."
		return o, nil
	})
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	if r := p.Row(t, id); r.State != run.StateFailed || len(p.Repo.Publishes()) != 0 {
		t.Fatalf("run = %+v, %d publishes", r, len(p.Repo.Publishes()))
	}
	body := p.Repo.LastEdit().Body
	for _, want := range []string{"without a pull request", "frognano refused the agent's patch (the summary below says why), so there is no pull request.", "private-key in"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "without changing any file") {
		t.Errorf("final comment says the agent changed nothing:\n%s", body)
	}
}

func TestClosedIssueIsSkipped(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.State = "closed"
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	if got := p.Row(t, id).State; got != run.StateSkipped {
		t.Errorf("state = %s, want skipped", got)
	}
	if p.Runner.Calls() != 0 {
		t.Error("ran the agent on a closed issue")
	}
}

func TestCancelledRunIsNotWorked(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Cancel(t, id, "label removed")
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work = %v", r)
	}
	if p.Runner.Calls() != 0 || len(p.Repo.Comments()) != 0 {
		t.Error("a cancelled run was worked")
	}
}

func TestCancelledWhileAgentRunsDoesNotPublish(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := p.Label(t, 7)
	p.Runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		// The unlabel arrives while the agent works; the queue has not yet
		// cancelled our context.
		p.Cancel(t, id, "label removed")
		return runtest.GoodOutcome(), nil
	})
	if r := p.Work(t, id, 1); !r.Final() {
		t.Fatalf("attempt = %v, want the job cancelled", r)
	}
	if len(p.Repo.Publishes()) != 0 {
		t.Error("published a cancelled run")
	}
	if got := p.Row(t, id).State; got != run.StateCancelled {
		t.Errorf("state = %s", got)
	}
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "cancelled") {
		t.Errorf("final comment = %q", body)
	}
}

func TestThrottlesProgressEdits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		interval      int64 // seconds; -1 = no throttle
		maxEdits      int
		wantProgress  bool
		progressCalls int
	}{
		{"ThrottledToNone", 3600, 0, false, 50},
		{"Unthrottled", -1, 50, true, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Config.StatusEditInterval = time.Duration(tt.interval) * time.Second
			id := p.Label(t, 7)
			p.Runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
				for i := 1; i <= tt.progressCalls; i++ {
					progress(run.Progress{Step: i, Calls: []run.Call{{Tool: "Bash", Arguments: `{"command": "go test ./... ![x](https://evil.example/x.png)"}`}}})
				}
				if tt.wantProgress {
					// Wait until a progress edit lands, so the assertion
					// below is not a race.
					select {
					case <-p.Repo.StepEdited():
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return runtest.GoodOutcome(), nil
			})
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatal(r)
			}
			progressEdits := 0
			for _, e := range p.Repo.Edits() {
				if strings.Contains(e.Body, "Step ") {
					progressEdits++
					if strings.Contains(e.Body, "![x]") && !strings.Contains(e.Body, "`go test") {
						t.Errorf("model text rendered as markdown: %q", e.Body)
					}
				}
			}
			if progressEdits > tt.maxEdits || (tt.wantProgress && progressEdits == 0) {
				t.Errorf("%d progress edits for %d steps, want <= %d (and > 0: %v)", progressEdits, tt.progressCalls, tt.maxEdits, tt.wantProgress)
			}
			if len(p.Repo.Comments()) != 1 {
				t.Errorf("%d comments posted, want 1", len(p.Repo.Comments()))
			}
		})
	}
}

// TestTimeoutFailsTheRunAsMaxTime: the attempt's context ends at the job budget (the queue's
// worker makes it River's Timeout); the run fails as max_time and is final, not retried.
func TestTimeoutFailsTheRunAsMaxTime(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.JobTimeout = 300 * time.Millisecond
	id := p.Label(t, 7)
	p.Runner.Set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("agent run: %w", ctx.Err())
	})
	if r := p.Work(t, id, 1); !r.Final() {
		t.Fatalf("attempt = %v, want the job cancelled", r)
	}
	if r := p.Row(t, id); r.State != run.StateFailed || r.ExitReason != "max_time" {
		t.Errorf("run = %+v, want failed as max_time", r)
	}
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "time budget of 300ms") {
		t.Errorf("final comment = %q, want the time budget named", body)
	}
	if len(p.Repo.Publishes()) != 0 {
		t.Error("published after the time budget ran out")
	}
}
