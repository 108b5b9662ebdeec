package run_test

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

const ciSHA = "0000000000000000000000000000000000000abc"

// ciRun is a CI follow-up on PR 77 for failed commit sha, as the queue's intake records it.
func ciRun(t *testing.T, p *runtest.Pipeline, sha string) int64 {
	t.Helper()
	return p.Request(t, runtest.Request{Issue: 77, Labeler: "github-actions", Kind: run.KindCI,
		Request: "The check suite of GitHub Actions (github-actions) concluded failure on commit " + sha + ".", CISHA: sha})
}

// TestCIFollowUpOnceAndNotASecond: failed CI on the PR's head starts one follow-up, whose
// task and reply say it came from CI and which asks no one's permission; the CI failure of
// its own commit starts no second one (FROGNANO_CI_FOLLOWUPS, default 1).
func TestCIFollowUpOnceAndNotASecond(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Repo.PR.HeadSHA = ciSHA
	id := ciRun(t, p, ciSHA)
	if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSucceeded {
		t.Fatalf("CI follow-up: %v %s", r, p.Row(t, id).State)
	}
	spec := p.Runner.Specs()[0]
	if !strings.Contains(spec.Task, "The repository's CI (not a person) asks:") || !strings.Contains(spec.Task, "concluded failure on commit "+ciSHA) {
		t.Errorf("task:\n%s", spec.Task)
	}
	if len(p.Repo.PermissionAsked()) != 0 {
		t.Errorf("asked permission of %v for a CI follow-up", p.Repo.PermissionAsked())
	}
	if reply := p.Repo.Comments()[0]; !strings.Contains(reply, "triggered by CI") {
		t.Errorf("reply = %q", reply)
	}
	if last := p.Repo.LastEdit(); !strings.Contains(last.Body, "Triggered by CI: the repository's checks failed on `"+ciSHA+"`") {
		t.Errorf("final reply = %q", last.Body)
	}
	pub := p.Repo.Publishes()[0]
	if !pub.FastForward || !strings.Contains(pub.Body, "Triggered by the repository's failed CI") || !strings.Contains(pub.CommitMessage, "after CI failed") {
		t.Errorf("publish = %+v", pub)
	}

	// The follow-up's commit fails CI too: no second run.
	p.Repo.PR.HeadSHA = strings.Replace(ciSHA, "abc", "def", 1)
	again := ciRun(t, p, p.Repo.PR.HeadSHA)
	if r := p.Work(t, again, 1); !r.Completed() || p.Row(t, again).State != run.StateSkipped {
		t.Fatalf("second CI follow-up: %v %s", r, p.Row(t, again).State)
	}
	if n := p.Runner.Calls(); n != 1 || len(p.Repo.Comments()) != 1 {
		t.Errorf("runner called %d times, %d comments", n, len(p.Repo.Comments()))
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
			p := runtest.New(t)
			p.Config.CIFollowUps = tt.limit
			p.Repo.PR.HeadSHA = tt.head
			id := ciRun(t, p, ciSHA)
			if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSkipped {
				t.Fatalf("%v %s", r, p.Row(t, id).State)
			}
			if p.Runner.Calls() != 0 || len(p.Repo.Comments()) != 0 || len(p.Repo.Publishes()) != 0 {
				t.Error("a skipped CI follow-up ran, commented or published")
			}
		})
	}
}
