package queue

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// TestForkWithFrognanosBranchNameIsNotFrognanos: a pull request from a fork whose branch is named
// frognano/issue-N (anyone can open one) is not frognano's: neither a writer's request on it
// nor its failed CI clones, runs or pushes anything, and nothing is said on it.
func TestForkWithFrognanosBranchNameIsNotFrognanos(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{run.KindFollowUp, run.KindCI} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.repo.pr.HeadRepo, b.repo.pr.HeadRepoID = "mallory/pager", 4242
			b.repo.pr.HeadSHA = ciSHA
			var res Accepted
			if kind == run.KindCI {
				res = b.acceptCI(t, ciSHA)
			} else {
				res = b.acceptFollowUp(t, "reviewer", "@frognano fix this")
			}
			if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSkipped {
				t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
			}
			if b.runner.calls.Load() != 0 || b.repo.clones != 0 || len(b.repo.publishes) != 0 || len(b.repo.comments) != 0 {
				t.Errorf("a fork's pull request got %d runs, %d clones, %d publishes, comments %q",
					b.runner.calls.Load(), b.repo.clones, len(b.repo.publishes), b.repo.comments)
			}
		})
	}
}

// TestWritersRequestWaitsBehindAReadersAndRuns: a request on a pull request that has
// an active run used to be counted on that run, not started. A reader's request is such a run
// until the worker refuses it, so a writer's request that came meanwhile was counted on a run
// that never ran, and lost. It now waits as a run of its own while the reader's is unchecked,
// becomes queued (with its job) in the transaction that refuses the reader's, and runs.
func TestWritersRequestWaitsBehindAReadersAndRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.perms = map[string]string{"reader": "read"}
	res := b.acceptFollowUp(t, "reader", "@frognano do something")
	w := b.acceptFollowUp(t, "maintainer", "@frognano please rename x")
	if !w.Waiting || w.RunID == res.RunID || w.JobID != 0 {
		t.Fatalf("the writer's request: %+v, want a waiting run of its own", w)
	}
	if got := b.row(t, w.RunID).State; got != run.StateWaiting {
		t.Fatalf("the writer's run is %s, want waiting", got)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != run.StateSkipped {
		t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
	}
	if b.runner.calls.Load() != 0 {
		t.Error("the reader's request reached the model")
	}
	b.requirePromoted(t, w.RunID)
	if r := b.work(t, w, 1); !r.completed() || b.row(t, w.RunID).State != run.StateSucceeded {
		t.Fatalf("the writer's run: %v %s", r, b.row(t, w.RunID).State)
	}
	if b.runner.calls.Load() != 1 || !strings.Contains(b.runner.specs[0].Task, "please rename x") {
		t.Errorf("the writer's request did not reach the model: %d calls", b.runner.calls.Load())
	}
	if said := strings.Join(b.repo.comments, "\n"); strings.Contains(said, "not run") {
		t.Errorf("a request is said not to have run: %q", b.repo.comments)
	}
}
