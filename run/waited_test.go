package run_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// The queue decides which requests wait for a pull request's active run and promotes the
// oldest when it ends (queue/waiting.go, whose tests prove it through River); these are the
// run's side of it: what a run that waited does with the requests still waiting, what a
// refused run says of the requests counted on it, and that every end asks for the promotion.

// TestPromotedRunFoldsTheRunsWaitingOnIt: a run the queue promoted after it waited, once it
// passes its check, counts the requests still waiting on its pull request (each with the
// requests counted on it) and ends them as skipped (folded); its reply says how many more
// requests it answers. A run that never waited leaves them waiting.
func TestPromotedRunFoldsTheRunsWaitingOnIt(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	id := followUpWith(t, p, runtest.Request{Labeler: "maintainer", Request: "@frognano rename x", Promoted: true})
	w := p.Request(t, runtest.Request{Issue: 77, Labeler: "other-maintainer", Kind: run.KindFollowUp, Request: "@frognano rename y",
		State: run.StateWaiting})
	ci := p.Request(t, runtest.Request{Issue: 77, Labeler: "github-actions", Kind: run.KindCI, CISHA: ciSHA, State: run.StateWaiting})
	if _, err := p.Pool.Exec(context.Background(), `UPDATE runs SET extra_requests = 1 WHERE id = $1`, w); err != nil {
		t.Fatal(err)
	}
	if r := p.Work(t, id, 1); !r.Completed() {
		t.Fatal(r)
	}
	p.RequireState(t, id, run.StateSucceeded)
	for _, folded := range []int64{w, ci} {
		if got := p.Row(t, folded); got.State != run.StateSkipped || got.ExitReason != "folded" ||
			!strings.Contains(got.Error, fmt.Sprintf("counted on run %d", id)) {
			t.Errorf("waiting run %d: %+v, want skipped (folded), counted on run %d", folded, got, id)
		}
	}
	if n := p.Count(t, `SELECT extra_requests FROM runs WHERE id = $1`, id); n != 3 {
		t.Errorf("%d requests counted on the promoted run, want 3 (the two that waited, and the one counted on one of them)", n)
	}
	if last := p.Repo.LastEdit(); !strings.Contains(last.Body, "3 more request(s)") {
		t.Errorf("the reply does not count the folded requests:\n%s", last.Body)
	}
	if n := p.Runner.Calls(); n != 1 {
		t.Errorf("the agent ran %d times, want once for all of them", n)
	}

	t.Run("NeverWaited", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		w := p.Request(t, runtest.Request{Issue: 77, Labeler: "other-maintainer", Kind: run.KindFollowUp, State: run.StateWaiting})
		id := followUp(t, p, "maintainer", "@frognano rename x")
		if r := p.Work(t, id, 1); !r.Completed() {
			t.Fatal(r)
		}
		p.RequireState(t, id, run.StateSucceeded)
		if got := p.Row(t, w).State; got != run.StateWaiting {
			t.Errorf("the waiting run is %s: a run that never waited folds nothing", got)
		}
	})
}

// TestRefusedRequestSaysWhatWasCountedOnIt: a request refused for want of permission on which
// other requests were counted (beyond the waiting runs' bound) says, besides its refusal, that
// they were not run, in one comment; with none counted it says nothing more.
func TestRefusedRequestSaysWhatWasCountedOnIt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		counted int
		want    string
	}{
		{0, ""},
		{1, "1 more request on this pull request were counted on the request above instead of waiting their turn " +
			fmt.Sprintf("(one person waits with one request at a time, and at most %d wait); it was not run. Ask again to start a follow-up.", run.MaxWaitingRuns)},
		{10, "10 more requests on this pull request were counted on the request above instead of waiting their turn " +
			fmt.Sprintf("(one person waits with one request at a time, and at most %d wait); they were not run. Ask again to start a follow-up.", run.MaxWaitingRuns)},
	} {
		t.Run(fmt.Sprint(tt.counted), func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Repo.Perm = "read"
			id := followUp(t, p, "reader", "@frognano do something")
			if _, err := p.Pool.Exec(context.Background(), `UPDATE runs SET extra_requests = $2 WHERE id = $1`, id, tt.counted); err != nil {
				t.Fatal(err)
			}
			if r := p.Work(t, id, 1); !r.Completed() {
				t.Fatal(r)
			}
			p.RequireState(t, id, run.StateSkipped)
			comments := p.Repo.Comments()
			if len(comments) == 0 || !strings.Contains(comments[0], "No run was started") {
				t.Fatalf("comments %q, want the refusal first", comments)
			}
			switch {
			case tt.want == "" && len(comments) != 1:
				t.Errorf("comments %q, want the refusal alone", comments)
			case tt.want != "" && (len(comments) != 2 || comments[1] != tt.want):
				t.Errorf("comments %q, want the refusal, then %q", comments, tt.want)
			}
			if p.Runner.Calls() != 0 {
				t.Error("a reader's request reached the model")
			}
		})
	}
}

// TestEveryEndAsksToPromote: every end of an active run asks the queue (Promote) to promote
// the request waiting on its issue or pull request, in the end's transaction: a success, a
// refusal, a failure.
func TestEveryEndAsksToPromote(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	if r := p.Work(t, p.Label(t, 7), 1); !r.Completed() {
		t.Fatal(r)
	}
	p.Repo.FailNext("Clone", errorf("repository is empty"))
	if r := p.Work(t, p.Label(t, 8), 1); !r.Final() {
		t.Fatal(r)
	}
	p.Repo.Perms = map[string]string{"reader": "read"}
	if r := p.Work(t, followUp(t, p, "reader", "@frognano x"), 1); !r.Completed() {
		t.Fatal(r)
	}
	var got []string
	for _, e := range p.Promoted() {
		got = append(got, fmt.Sprintf("%d#%d", e.RepoID, e.Issue))
	}
	if want := []string{"42#7", "42#8", "42#77"}; !slices.Equal(got, want) {
		t.Errorf("promotions asked for %v, want %v (one per end)", got, want)
	}
}

// followUpWith is followUp with more of the request set.
func followUpWith(t *testing.T, p *runtest.Pipeline, req runtest.Request) int64 {
	t.Helper()
	req.Issue, req.Kind = 77, run.KindFollowUp
	if req.RequestURL == "" {
		req.RequestURL = "https://github.example/octo/pager/pull/77#issuecomment-9"
	}
	return p.Request(t, req)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
