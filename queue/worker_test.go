package queue

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
	"github.com/frognano/frognano/runner"
)

func TestWorkerHappyPathPublishesOnceOnIssueBranch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)

	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateSucceeded || r.PRURL == "" || r.PRNumber != 77 || r.Steps != 12 || r.ExitReason != "agent" {
		t.Errorf("run row = %+v, want succeeded with PR 77", r)
	}
	if !r.HasTrajectory || r.Report != "reporttext" {
		t.Errorf("trajectory stored %v, report %q: want the trajectory and the report without NUL", r.HasTrajectory, r.Report)
	}
	repo := b.repo
	if len(repo.publishes) != 1 {
		t.Fatalf("Publish called %d times, want 1", len(repo.publishes))
	}
	in := repo.publishes[0]
	if in.Branch != "frognano/issue-7" || in.BaseBranch != "main" || in.IssueNumber != 7 || in.BaseSHA == "" {
		t.Errorf("PublishInput = %+v", in)
	}
	if !strings.HasSuffix(in.Body, "\n\nFixes #7") || !strings.HasPrefix(in.Body, "This fixes the pager.") {
		t.Errorf("PR body = %q", in.Body)
	}
	if len(repo.reactions) != 1 || repo.reactions[0] != "eyes" {
		t.Errorf("reactions = %v, want [eyes]", repo.reactions)
	}
	if len(repo.comments) != 1 {
		t.Fatalf("posted %d comments, want 1", len(repo.comments))
	}
	last := repo.lastEdit()
	if last.id != r.CommentID || !strings.Contains(last.body, "#77") || !strings.Contains(last.body, "pull/77") {
		t.Errorf("final edit = %+v, want comment %d linking the PR", last, r.CommentID)
	}
	// The task is sanitized: the hidden HTML comment never reaches the runner.
	spec := b.runner.specs[0]
	if strings.Contains(spec.Task, "secret") || !strings.HasPrefix(spec.Task, "Pager skips the last page\n\n") {
		t.Errorf("task = %q", spec.Task)
	}
	// The host clone is removed after the run.
	if _, err := os.Stat(repo.cloneDirs[0]); !os.IsNotExist(err) {
		t.Errorf("clone dir %s still exists (err %v)", repo.cloneDirs[0], err)
	}
}

func TestWorkerLabelerWithoutWriteGetsOneCommentAndNoRun(t *testing.T) {
	t.Parallel()
	for _, perm := range []string{"read", "triage", "none", ""} {
		t.Run("Perm"+perm, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.repo.perm = perm
			res := b.accept(t, 7)
			if r := b.work(t, res, 1); !r.completed() {
				t.Fatalf("Work: %v", r)
			}
			if got := b.row(t, res.RunID).State; got != run.StateSkipped {
				t.Errorf("state = %s, want skipped", got)
			}
			if len(b.repo.comments) != 1 || !strings.Contains(b.repo.comments[0], "@maintainer") {
				t.Errorf("comments = %q, want one explanation to @maintainer", b.repo.comments)
			}
			if b.runner.calls.Load() != 0 || b.repo.clones != 0 || len(b.repo.reactions) != 0 || len(b.repo.publishes) != 0 {
				t.Errorf("a denied request did work: runner %d clones %d reactions %v", b.runner.calls.Load(), b.repo.clones, b.repo.reactions)
			}
			// Working the job again (a redelivered job) changes nothing.
			if r := b.work(t, res, 2); !r.completed() {
				t.Fatal(r)
			}
			if len(b.repo.comments) != 1 {
				t.Errorf("second attempt posted again: %d comments", len(b.repo.comments))
			}
		})
	}
}

func TestWorkerTransientErrorsRetryAndReuseTheStatusComment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.repo.failNext("Clone", flaky("cloning"))

	if r := b.work(t, res, 1); !r.retried() {
		t.Fatalf("attempt 1 = %v, want a retryable error", r)
	}
	if r := b.row(t, res.RunID); r.State != run.StateQueued || !strings.Contains(r.Error, "connection reset") {
		t.Errorf("after transient failure: %+v, want queued with the error", r)
	}
	if r := b.work(t, res, 2); !r.completed() {
		t.Fatalf("attempt 2: %v", r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateSucceeded || r.Attempts != 2 {
		t.Errorf("after retry: %+v, want succeeded after 2 attempts", r)
	}
	if len(b.repo.comments) != 1 || len(b.repo.reactions) != 1 {
		t.Errorf("comments %d reactions %d, want the status comment edited, not re-posted", len(b.repo.comments), len(b.repo.reactions))
	}
	for _, e := range b.repo.edits {
		if e.id != r.CommentID {
			t.Errorf("edited comment %d, want only %d", e.id, r.CommentID)
		}
	}
}

func TestWorkerErrorClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		method    string
		err       error
		attempt   int
		wantRetry bool
		wantState string
	}{
		{"TransientPermission", "Permission", flaky("permission"), 1, true, run.StateQueued},
		{"TransientOnLastAttempt", "Permission", flaky("permission"), MaxAttempts, false, run.StateFailed},
		{"PermanentIssue", "Issue", errors.New("404 Not Found"), 1, false, run.StateFailed},
		{"PermanentClone", "Clone", errors.New("repository is empty"), 1, false, run.StateFailed},
		{"TransientMark", "Comment", fault.Transient(errors.New("502 Bad Gateway")), 1, true, run.StateQueued},
		{"PermanentMark", "Comment", fault.Permanent(errors.New("422 Unprocessable")), 1, false, run.StateFailed},
		{"Cancelled", "Clone", context.Canceled, 1, false, run.StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			res := b.accept(t, 7)
			b.repo.failNext(tt.method, tt.err)
			r := b.work(t, res, tt.attempt)
			if r.completed() {
				t.Fatal("the attempt succeeded, want an error")
			}
			// Only River's retry counts: a failure that is not retried cancels the job.
			if r.retried() != tt.wantRetry || r.retried() == r.cancelled() {
				t.Errorf("attempt = %v: retried %v, want %v", r, r.retried(), tt.wantRetry)
			}
			if got := b.row(t, res.RunID).State; got != tt.wantState {
				t.Errorf("state = %s, want %s", got, tt.wantState)
			}
			if len(b.repo.publishes) != 0 {
				t.Error("published after a failure")
			}
		})
	}
}

func TestWorkerRunnerInfrastructureFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return nil, errors.New("docker: no such image frognano-sandbox")
	})
	if r := b.work(t, res, 1); !r.cancelled() {
		t.Fatalf("attempt = %v, want a permanent failure", r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateFailed || !strings.Contains(r.Error, "no such image") {
		t.Errorf("run = %+v", r)
	}
	if body := b.repo.lastEdit().body; !strings.Contains(body, "ended without a pull request") || strings.Contains(body, "no such image") {
		t.Errorf("final comment = %q: want a factual failure without internal error text", body)
	}
}

func TestWorkerPublishRetryDoesNotRerunTheAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.repo.failNext("Publish", flaky("pushing"))
	if r := b.work(t, res, 1); !r.retried() {
		t.Fatalf("attempt 1 = %v, want retryable", r)
	}
	if r := b.row(t, res.RunID); !r.AgentDone || r.State != run.StateQueued {
		t.Fatalf("after failed publish: %+v, want the outcome kept and the run queued", r)
	}
	if r := b.work(t, res, 2); !r.completed() {
		t.Fatalf("attempt 2: %v", r)
	}
	if n := b.runner.calls.Load(); n != 1 {
		t.Errorf("runner called %d times, want 1", n)
	}
	if len(b.repo.publishes) != 2 {
		t.Fatalf("publish called %d times, want 2", len(b.repo.publishes))
	}
	p1, p2 := b.repo.publishes[0], b.repo.publishes[1]
	if p1.Branch != p2.Branch || p1.BaseSHA != p2.BaseSHA || string(p1.Patch) != string(p2.Patch) {
		t.Errorf("retry published differently: %+v vs %+v", p1, p2)
	}
	if got := b.row(t, res.RunID).State; got != run.StateSucceeded {
		t.Errorf("state = %s", got)
	}
}

func TestWorkerEmptyPatchEndsWithoutPR(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := goodOutcome()
		o.Patch, o.NoPatch, o.ExitReason, o.Summary = nil, runner.NoPatchUnchanged, "max_turns", "Tried 100 steps; tests still fail in pager_test.go."
		return o, nil
	})
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateFailed || r.ExitReason != "max_turns" {
		t.Errorf("run = %+v", r)
	}
	if len(b.repo.publishes) != 0 {
		t.Error("published an empty patch")
	}
	body := b.repo.lastEdit().body
	for _, want := range []string{"without a pull request", "max_turns", "Tried 100 steps", "without changing any file"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
}

// TestWorkerRefusedPatchSaysSo: a patch the runner refused (here for a secret) ends the run
// without a pull request, and the status comment says the patch was refused, from the
// outcome's typed reason, not that the agent changed nothing.
func TestWorkerRefusedPatchSaysSo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		o := goodOutcome()
		o.Patch, o.NoPatch, o.Summary = nil, runner.NoPatchRefused, "The patch was refused: it holds what looks like a secret: private-key in \"deploy/key.pem\" line 1."
		return o, nil
	})
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	if r := b.row(t, res.RunID); r.State != run.StateFailed || len(b.repo.publishes) != 0 {
		t.Fatalf("run = %+v, %d publishes", r, len(b.repo.publishes))
	}
	body := b.repo.lastEdit().body
	for _, want := range []string{"without a pull request", "frognano refused the agent's patch (the summary below says why), so there is no pull request.", "private-key in"} {
		if !strings.Contains(body, want) {
			t.Errorf("final comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "without changing any file") {
		t.Errorf("final comment says the agent changed nothing:\n%s", body)
	}
}

func TestWorkerClosedIssueIsSkipped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.state = "closed"
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	if got := b.row(t, res.RunID).State; got != run.StateSkipped {
		t.Errorf("state = %s, want skipped", got)
	}
	if b.runner.calls.Load() != 0 {
		t.Error("ran the agent on a closed issue")
	}
}

// TestWorkerParksWhenInstallationIsBusy: a run whose installation is at its limit is parked
// (queued, parked_at set) and its job ends, spending no attempt; the end of the running run
// wakes it with a new job, available at once, and it then runs.
func TestWorkerParksWhenInstallationIsBusy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PerInstallationLimit = 1
	busy := b.accept(t, 1)
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'running', started_at = now() WHERE id = $1`, busy.RunID); err != nil {
		t.Fatal(err)
	}
	res := b.accept(t, 2)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("attempt = %v, want the job ended", r)
	}
	if got := b.row(t, res.RunID).State; got != run.StateQueued || !b.parked(t, res.RunID) {
		t.Errorf("state = %s, parked %v; want queued and parked", got, b.parked(t, res.RunID))
	}
	if b.runner.calls.Load() != 0 {
		t.Error("ran while the installation was at its limit")
	}
	b.end(t, busy.RunID)
	job := b.requireWoken(t, res.RunID)
	if job.MaxAttempts != MaxAttempts || job.Args.Spent != 0 {
		t.Errorf("woken job: %d attempts, %d spent; want %d and none", job.MaxAttempts, job.Args.Spent, MaxAttempts)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded || b.row(t, res.RunID).Attempts != 1 {
		t.Fatalf("the woken run: %v %+v", r, b.row(t, res.RunID))
	}
}

func TestWorkerCancelledRunIsNotWorked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	if _, err := b.client.Cancel(context.Background(), b.delivery("issues", "unlabeled"), 42, 7, "label removed"); err != nil {
		t.Fatal(err)
	}
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work = %v", r)
	}
	if b.runner.calls.Load() != 0 || len(b.repo.comments) != 0 {
		t.Error("a cancelled run was worked")
	}
}

func TestWorkerCancelledWhileAgentRunsDoesNotPublish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	b.runner.set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		// The unlabel arrives while the agent works; River has not yet
		// cancelled our context.
		if _, err := b.client.Cancel(ctx, b.delivery("issues", "unlabeled"), 42, 7, "label removed"); err != nil {
			return nil, err
		}
		return goodOutcome(), nil
	})
	if r := b.work(t, res, 1); !r.cancelled() {
		t.Fatalf("attempt = %v, want the job cancelled", r)
	}
	if len(b.repo.publishes) != 0 {
		t.Error("published a cancelled run")
	}
	if got := b.row(t, res.RunID).State; got != run.StateCancelled {
		t.Errorf("state = %s", got)
	}
	if body := b.repo.lastEdit().body; !strings.Contains(body, "cancelled") {
		t.Errorf("final comment = %q", body)
	}
}

func TestWorkerThrottlesProgressEdits(t *testing.T) {
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
			b := setup(t)
			b.worker.cfg.StatusEditInterval = time.Duration(tt.interval) * time.Second
			res := b.accept(t, 7)
			b.runner.set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
				for i := 1; i <= tt.progressCalls; i++ {
					progress(run.Progress{Step: i, Calls: []run.Call{{Tool: "Bash", Arguments: `{"command": "go test ./... ![x](https://evil.example/x.png)"}`}}})
				}
				if tt.wantProgress {
					// Wait until a progress edit lands, so the assertion
					// below is not a race.
					select {
					case <-b.repo.stepEdited:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return goodOutcome(), nil
			})
			if r := b.work(t, res, 1); !r.completed() {
				t.Fatal(r)
			}
			progressEdits := 0
			for _, e := range b.repo.edits {
				if strings.Contains(e.body, "Step ") {
					progressEdits++
					if strings.Contains(e.body, "![x]") && !strings.Contains(e.body, "`go test") {
						t.Errorf("model text rendered as markdown: %q", e.body)
					}
				}
			}
			if progressEdits > tt.maxEdits || (tt.wantProgress && progressEdits == 0) {
				t.Errorf("%d progress edits for %d steps, want <= %d (and > 0: %v)", progressEdits, tt.progressCalls, tt.maxEdits, tt.wantProgress)
			}
			if len(b.repo.comments) != 1 {
				t.Errorf("%d comments posted, want 1", len(b.repo.comments))
			}
		})
	}
}

// TestWorkerTimeoutFailsTheRunAsMaxTime: River ends the attempt at the worker's
// Timeout (the job budget); the run fails as max_time and the job is cancelled, not retried.
func TestWorkerTimeoutFailsTheRunAsMaxTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.JobTimeout = 300 * time.Millisecond
	res := b.accept(t, 7)
	b.runner.set(func(ctx context.Context, spec run.RunSpec, progress func(run.Progress)) (*run.Outcome, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("agent run: %w", ctx.Err())
	})
	if r := b.work(t, res, 1); !r.cancelled() {
		t.Fatalf("attempt = %v, want the job cancelled", r)
	}
	if r := b.row(t, res.RunID); r.State != run.StateFailed || r.ExitReason != "max_time" {
		t.Errorf("run = %+v, want failed as max_time", r)
	}
	if body := b.repo.lastEdit().body; !strings.Contains(body, "time budget of 300ms") {
		t.Errorf("final comment = %q, want the time budget named", body)
	}
	if len(b.repo.publishes) != 0 {
		t.Error("published after the time budget ran out")
	}
}
