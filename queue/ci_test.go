package queue

import (
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

const ciSHA = "0000000000000000000000000000000000000abc"

func (b *bundle) acceptCI(t *testing.T, sha string) Accepted {
	t.Helper()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "github-actions",
		Kind: run.KindCI, Request: "The check suite of GitHub Actions (github-actions) concluded failure on commit " + sha + ".", CISHA: sha}
	res, err := b.client.Accept(context.Background(), b.delivery("check_suite", "completed"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	return res
}

// TestCIFollowUpOnceAndNotASecond: failed CI on the PR's head starts one follow-up, whose
// task and reply say it came from CI and which asks no one's permission; the CI failure of
// its own commit starts no second one (FROGNANO_CI_FOLLOWUPS, default 1).
func TestCIFollowUpOnceAndNotASecond(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.pr.HeadSHA = ciSHA
	res := b.acceptCI(t, ciSHA)
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSucceeded {
		t.Fatalf("CI follow-up: %v %s", r, b.row(t, res.RunID).State)
	}
	spec := b.runner.specs[0]
	if !strings.Contains(spec.Task, "The repository's CI (not a person) asks:") || !strings.Contains(spec.Task, "concluded failure on commit "+ciSHA) {
		t.Errorf("task:\n%s", spec.Task)
	}
	if len(b.repo.permAsked) != 0 {
		t.Errorf("asked permission of %v for a CI follow-up", b.repo.permAsked)
	}
	if reply := b.repo.comments[0]; !strings.Contains(reply, "triggered by CI") {
		t.Errorf("reply = %q", reply)
	}
	if last := b.repo.lastEdit(); !strings.Contains(last.body, "Triggered by CI: the repository's checks failed on `"+ciSHA+"`") {
		t.Errorf("final reply = %q", last.body)
	}
	p := b.repo.publishes[0]
	if !p.FastForward || !strings.Contains(p.Body, "Triggered by the repository's failed CI") || !strings.Contains(p.CommitMessage, "after CI failed") {
		t.Errorf("publish = %+v", p)
	}

	// The follow-up's commit fails CI too: no second run.
	b.repo.pr.HeadSHA = strings.Replace(ciSHA, "abc", "def", 1)
	again := b.acceptCI(t, b.repo.pr.HeadSHA)
	if r := b.work(t, again, 1); !r.completed() || b.row(t, again.RunID).State != run.StateSkipped {
		t.Fatalf("second CI follow-up: %v %s", r, b.row(t, again.RunID).State)
	}
	if n := b.runner.calls.Load(); n != 1 || len(b.repo.comments) != 1 {
		t.Errorf("runner called %d times, %d comments", n, len(b.repo.comments))
	}
}

// TestCIFollowUpSkips: CI that failed on a commit that is no longer the head, or with
// CI follow-ups turned off, starts nothing and says nothing.
func TestCIFollowUpSkips(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		limit int
		head  string
	}{{"OldCommit", 0, strings.Replace(ciSHA, "abc", "fff", 1)}, {"TurnedOff", -1, ciSHA}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.worker.cfg.CIFollowUps = tt.limit
			b.repo.pr.HeadSHA = tt.head
			res := b.acceptCI(t, ciSHA)
			if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSkipped {
				t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
			}
			if b.runner.calls.Load() != 0 || len(b.repo.comments) != 0 || len(b.repo.publishes) != 0 {
				t.Error("a skipped CI follow-up ran, commented or published")
			}
		})
	}
}
