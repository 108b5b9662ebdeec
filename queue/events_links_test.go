package queue

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

// With FROGNANO_PUBLIC_URL set, the status comment links the run's page; the runner gets it
// through the context, for the pull request body and the check run's details_url (what it
// makes of it: run's TestOutcomeLinksThePage).
func TestRunPageLinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.worker.cfg.PublicURL = "https://frognano.example.com/"
	var page string
	b.runner.set(func(ctx context.Context, spec run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
		page = run.EventsFrom(ctx).PageURL()
		return goodOutcome(), nil
	})
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	want := "https://frognano.example.com/runs/" + strconv.FormatInt(res.RunID, 10)
	if page != want {
		t.Errorf("the runner's page URL = %q, want %q", page, want)
	}
	if body := b.repo.lastEdit().body; !strings.Contains(body, "The run's steps, patch and tests: "+want) {
		t.Errorf("final status comment lacks the link:\n%s", body)
	}
}
