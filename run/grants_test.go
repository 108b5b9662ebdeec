package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// An installation without checks: write still gets its run and pull request; the status
// comment and the pull request body (through the runner's spec) say that check runs are off,
// why, and who can turn them on.
func TestWithoutChecksWriteSaysChecksAreOff(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Granted = &githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"}}
	p.Repo.WantChecks = true
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	if r := p.Row(t, id); r.State != run.StateSucceeded || r.PRNumber != 77 {
		t.Fatalf("run row = %+v, want succeeded with its pull request", r)
	}
	want := "Check runs are off: the App's installation has not granted `checks: write`"
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, want) || !strings.Contains(body, "an owner of octo can approve them") {
		t.Errorf("final status comment lacks the notice:\n%s", body)
	}
	if spec := p.Runner.Specs()[0]; len(spec.Notices) != 1 || !strings.HasPrefix(spec.Notices[0], want) {
		t.Errorf("the runner was given notices %q for the pull request body", spec.Notices)
	}
}

// An installation missing a core permission gets no run: one comment saying which permissions
// and who approves them, the reason in the run's record, no retry, no reaction, no clone.
func TestWithoutACorePermissionSaysWhich(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.Granted = &githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "read", "metadata": "read"}}
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v (want the job completed: no retry)", r)
	}
	r := p.Row(t, id)
	if r.State != run.StateFailed || r.ExitReason != run.ExitPermissions || r.Attempts != 1 {
		t.Errorf("run = %+v, want failed as %s after one attempt", r, run.ExitPermissions)
	}
	if len(p.Repo.Comments()) != 1 || len(p.Repo.Reactions()) != 0 || p.Repo.Clones() != 0 || len(p.Runner.Specs()) != 0 {
		t.Fatalf("comments %d, reactions %v, clones %d, runs %d: want one comment and nothing else",
			len(p.Repo.Comments()), p.Repo.Reactions(), p.Repo.Clones(), len(p.Runner.Specs()))
	}
	for _, want := range []string{"has not granted it `pull_requests: read, needs write`", "an owner of octo can approve them", "add the label again"} {
		if !strings.Contains(p.Repo.Comments()[0], want) {
			t.Errorf("comment lacks %q:\n%s", want, p.Repo.Comments()[0])
		}
	}
	kept, err := run.NewStore(p.Pool, nil).Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kept.Error, "pull_requests: read, needs write") {
		t.Errorf("the run's record says %q", kept.Error)
	}

	t.Run("CannotComment", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		p.Repo.Granted = &githubapp.Grants{Installation: 1, Permissions: map[string]string{"contents": "write", "metadata": "read"}}
		id := p.Label(t, 8)
		if r := p.Work(t, id, 1); !r.Completed() {
			t.Fatalf("Work: %v", r)
		}
		if len(p.Repo.Comments()) != 0 {
			t.Errorf("commented %q without issues: write", p.Repo.Comments())
		}
		kept, err := run.NewStore(p.Pool, nil).Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if kept.State != run.StateFailed || kept.ExitReason != run.ExitPermissions || !strings.Contains(kept.Error, "issues: none, needs write") {
			t.Errorf("run record %+v", kept)
		}
	})
}
