package queue

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

// An installation without checks: write still gets its run and pull request; the status
// comment and the pull request body (through the runner's spec) say that check runs are off,
// why, and who can turn them on.
func TestWorkerWithoutChecksWriteSaysChecksAreOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.grants = &githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"}}
	b.repo.checksWanted = true
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	if r := b.row(t, res.RunID); r.State != run.StateSucceeded || r.PRNumber != 77 {
		t.Fatalf("run row = %+v, want succeeded with its pull request", r)
	}
	want := "Check runs are off: the App's installation has not granted `checks: write`"
	if body := b.repo.lastEdit().body; !strings.Contains(body, want) || !strings.Contains(body, "an owner of octo can approve them") {
		t.Errorf("final status comment lacks the notice:\n%s", body)
	}
	if spec := b.runner.specs[0]; len(spec.Notices) != 1 || !strings.HasPrefix(spec.Notices[0], want) {
		t.Errorf("the runner was given notices %q for the pull request body", spec.Notices)
	}
}

// An installation missing a core permission gets no run: one comment saying which permissions
// and who approves them, the reason in the run's record, no retry, no reaction, no clone.
func TestWorkerWithoutACorePermissionSaysWhich(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.grants = &githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "read", "metadata": "read"}}
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v (want the job completed: no retry)", r)
	}
	r := b.row(t, res.RunID)
	if r.State != run.StateFailed || r.ExitReason != run.ExitPermissions || r.Attempts != 1 {
		t.Errorf("run = %+v, want failed as %s after one attempt", r, run.ExitPermissions)
	}
	if len(b.repo.comments) != 1 || len(b.repo.reactions) != 0 || b.repo.clones != 0 || len(b.runner.specs) != 0 {
		t.Fatalf("comments %d, reactions %v, clones %d, runs %d: want one comment and nothing else",
			len(b.repo.comments), b.repo.reactions, b.repo.clones, len(b.runner.specs))
	}
	for _, want := range []string{"has not granted it `pull_requests: read, needs write`", "an owner of octo can approve them", "add the label again"} {
		if !strings.Contains(b.repo.comments[0], want) {
			t.Errorf("comment lacks %q:\n%s", want, b.repo.comments[0])
		}
	}
	kept, err := run.NewStore(b.pool, nil).Run(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kept.Error, "pull_requests: read, needs write") {
		t.Errorf("the run's record says %q", kept.Error)
	}

	t.Run("CannotComment", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.repo.grants = &githubapp.Grants{Installation: 1, Permissions: map[string]string{"contents": "write", "metadata": "read"}}
		res := b.accept(t, 8)
		if r := b.work(t, res, 1); !r.completed() {
			t.Fatalf("Work: %v", r)
		}
		if len(b.repo.comments) != 0 {
			t.Errorf("commented %q without issues: write", b.repo.comments)
		}
		kept, err := run.NewStore(b.pool, nil).Run(context.Background(), res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if kept.State != run.StateFailed || kept.ExitReason != run.ExitPermissions || !strings.Contains(kept.Error, "issues: none, needs write") {
			t.Errorf("run record %+v", kept)
		}
	})
}
