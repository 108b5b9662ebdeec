package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// TestFollowUpSeesOnlyItsRepositorysEarlierRuns: runs stored under this repository's name
// (octo/pager) but of another repository, which had the name before (renamed or deleted, the
// name taken since), are not this pull request's earlier work: their headlines never reach the
// follow-up's task, and their CI follow-ups are not counted on its budget.
func TestFollowUpSeesOnlyItsRepositorysEarlierRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other := request(7)
	other.RepoID = 4242
	old, err := b.client.Accept(ctx, b.delivery("issues", "labeled"), other)
	if err != nil {
		t.Fatal(err)
	}
	const leak = "The old repository's private plan"
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET state = 'succeeded', finished_at = now(), exit_reason = 'agent',
		headline = $2 WHERE id = $1`, old.RunID, leak); err != nil {
		t.Fatal(err)
	}
	ci := request(77)
	ci.RepoID, ci.Kind, ci.Labeler, ci.CISHA, ci.SourceID = 4242, run.KindCI, "ci-app", ciSHA, 1
	if _, err := b.client.Accept(ctx, b.delivery("check_suite", "completed"), ci); err != nil {
		t.Fatal(err)
	}

	first := b.accept(t, 7)
	if r := b.work(t, first, 1); !r.completed() {
		t.Fatal(r)
	}
	b.runner.set(func(context.Context, run.RunSpec, func(run.Progress)) (*run.Outcome, error) {
		return checkedOutcome(), nil
	})
	res := b.acceptFollowUp(t, "reviewer", "@frognano please also handle page 0")
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatal(r)
	}
	spec := b.runner.specs[1]
	if strings.Contains(spec.Task, leak) || strings.Contains(spec.Task, fmt.Sprintf("Run %d ", old.RunID)) {
		t.Errorf("the follow-up's task holds another repository's run:\n%s", spec.Task)
	}
	if !strings.Contains(spec.Task, fmt.Sprintf("Run %d (the first run, on the issue): succeeded", first.RunID)) {
		t.Errorf("the follow-up's task lacks its own earlier run:\n%s", spec.Task)
	}

	// The other repository's CI follow-up on its pull request 77 is not this one's.
	b.repo.pr.HeadSHA = ciSHA
	mine := b.acceptCI(t, ciSHA)
	if r := b.work(t, mine, 1); !r.completed() {
		t.Fatal(r)
	}
	if got := b.row(t, mine.RunID).State; got == run.StateSkipped {
		t.Errorf("this pull request's first CI follow-up was skipped: another repository's was counted")
	}
}
