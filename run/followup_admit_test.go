package run_test

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestForkWithFrognanosBranchNameIsNotFrognanos: a pull request from a fork whose branch is named
// frognano/issue-N (anyone can open one) is not frognano's: neither a writer's request on it
// nor its failed CI clones, runs or pushes anything; the writer is told why in one comment, and
// nothing is said of CI.
func TestForkWithFrognanosBranchNameIsNotFrognanos(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{run.KindFollowUp, run.KindCI} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Repo.PR.HeadRepo, p.Repo.PR.HeadRepoID = "mallory/pager", 4242
			p.Repo.PR.HeadSHA = ciSHA
			var id int64
			if kind == run.KindCI {
				id = ciRun(t, p, ciSHA)
			} else {
				id = followUp(t, p, "reviewer", "@frognano fix this")
			}
			if r := p.Work(t, id, 1); !r.Completed() || p.Row(t, id).State != run.StateSkipped {
				t.Fatalf("%v %s", r, p.Row(t, id).State)
			}
			if p.Runner.Calls() != 0 || p.Repo.Clones() != 0 || len(p.Repo.Publishes()) != 0 {
				t.Errorf("a fork's pull request got %d runs, %d clones, %d publishes",
					p.Runner.Calls(), p.Repo.Clones(), len(p.Repo.Publishes()))
			}
			comments := p.Repo.Comments()
			if kind == run.KindCI && len(comments) != 0 {
				t.Errorf("CI on a fork's pull request was answered: %q", comments)
			}
			if kind == run.KindFollowUp && (len(comments) != 1 || !strings.Contains(comments[0], "its branch is in a fork (`mallory/pager`)")) {
				t.Errorf("the writer was not told why: %q", comments)
			}
		})
	}
}
