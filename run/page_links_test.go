package run_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// With FROGNANO_PUBLIC_URL set, the status comment links the run's page; the runner gets it
// through the context, for the pull request body and the check run's details_url (what it
// makes of it: run's TestOutcomeLinksThePage).
func TestRunPageLinks(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	p.Config.PublicURL = "https://frognano.example.com/"
	var page string
	p.Runner.Set(func(ctx context.Context, spec run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
		page = run.EventsFrom(ctx).PageURL()
		return runtest.GoodOutcome(), nil
	})
	id := p.Label(t, 7)
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	want := "https://frognano.example.com/runs/" + strconv.FormatInt(id, 10)
	if page != want {
		t.Errorf("the runner's page URL = %q, want %q", page, want)
	}
	if body := p.Repo.LastEdit().Body; !strings.Contains(body, "The run's steps, patch and tests: "+want) {
		t.Errorf("final status comment lacks the link:\n%s", body)
	}
}
