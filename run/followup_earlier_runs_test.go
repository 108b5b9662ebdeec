package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestFollowUpSeesOnlyItsRepositorysEarlierRuns: runs stored under this repository's name
// (octo/pager) but of another repository, which had the name before (renamed or deleted, the
// name taken since), are not this pull request's earlier work: their headlines never reach the
// follow-up's task, and their CI follow-ups are not counted on its budget.
func TestFollowUpSeesOnlyItsRepositorysEarlierRuns(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	ctx := context.Background()
	old := p.Request(t, runtest.Request{Issue: 7, RepoID: 4242})
	const leak = "The old repository's private plan"
	if _, err := p.Pool.Exec(ctx, `UPDATE runs SET state = 'succeeded', finished_at = now(), exit_reason = 'agent',
		headline = $2 WHERE id = $1`, old, leak); err != nil {
		t.Fatal(err)
	}
	p.Request(t, runtest.Request{Issue: 77, RepoID: 4242, Kind: run.KindCI, Labeler: "ci-app", CISHA: ciSHA, SourceID: 1})

	first := p.Label(t, 7)
	if r := p.Work(t, first, 1); !r.Completed() {
		t.Fatal(r)
	}
	p.Runner.Set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return checkedOutcome(), nil
	})
	id := followUp(t, p, "reviewer", "@frognano please also handle page 0")
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	spec := p.Runner.Specs()[1]
	if strings.Contains(spec.Task, leak) || strings.Contains(spec.Task, fmt.Sprintf("Run %d ", old)) {
		t.Errorf("the follow-up's task holds another repository's run:\n%s", spec.Task)
	}
	if !strings.Contains(spec.Task, fmt.Sprintf("Run %d (the first run, on the issue): succeeded", first)) {
		t.Errorf("the follow-up's task lacks its own earlier run:\n%s", spec.Task)
	}

	// The other repository's CI follow-up on its pull request 77 is not this one's.
	p.Repo.PR.HeadSHA = ciSHA
	mine := ciRun(t, p, ciSHA)
	if r := p.Work(t, mine, 1); !r.Completed() {
		t.Fatal(r)
	}
	if got := p.Row(t, mine).State; got == run.StateSkipped {
		t.Errorf("this pull request's first CI follow-up was skipped: another repository's was counted")
	}
}
