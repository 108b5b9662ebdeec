package run_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestStopReply: the answer to `@APP stop` names the runs it stopped and the requests that
// waited for them, or says there was nothing to stop.
func TestStopReply(t *testing.T) {
	t.Parallel()
	const after = " at your request; nothing more will be pushed for it. Ask again with a new comment when you want another follow-up."
	for _, tt := range []struct {
		active, waiting []int64
		want            string
	}{
		{nil, nil, "@rev: there is no waiting, queued or running frognano follow-up on this pull request, so there was nothing to stop."},
		{[]int64{5}, nil, "🛑 @rev: frognano stopped run 5" + after},
		{[]int64{5}, []int64{6, 7}, "🛑 @rev: frognano stopped run 5, and 2 requests that waited for it (run 6, run 7)" + after},
		{nil, []int64{6}, "🛑 @rev: frognano stopped 1 request that waited for an earlier run (run 6)" + after},
	} {
		if got := run.StopReply("rev", tt.active, tt.waiting); got != tt.want {
			t.Errorf("StopReply(%v, %v) =\n%q, want\n%q", tt.active, tt.waiting, got, tt.want)
		}
	}
}

// TestRewriteStatus: the status comment of a run that ended with nobody to say so is
// rewritten: cancelled, or failed by the queue's cleanup (dead: DeadRunNote); any other run,
// or one without a comment, is left alone; GitHub's refusal is final, a transient error not.
func TestRewriteStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, state string
		dead        bool
		comment     int64
		fail        error
		want        string // in the edit; "": no edit
		final       bool
	}{
		{"Cancelled", run.StateCancelled, false, 1001, nil, "The label was removed or the issue was closed.", false},
		{"Dead", run.StateFailed, true, 1001, nil, run.DeadRunNote, false},
		{"FailedNotDead", run.StateFailed, false, 1001, nil, "", false},
		{"Running", run.StateRunning, true, 1001, nil, "", false},
		{"NoComment", run.StateCancelled, false, 0, nil, "", false},
		{"Refused", run.StateCancelled, false, 1001, errors.New("404 Not Found"), "", true},
		{"Transient", run.StateCancelled, false, 1001, runtest.Flaky("editing"), "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			id := p.Label(t, 7)
			if _, err := p.Pool.Exec(context.Background(), `UPDATE runs SET state = $2, comment_id = nullif($3, 0) WHERE id = $1`,
				id, tt.state, tt.comment); err != nil {
				t.Fatal(err)
			}
			if tt.fail != nil {
				p.Repo.FailNext("EditComment", tt.fail)
			}
			err := run.NewPipeline(p.Config).RewriteStatus(context.Background(), id, tt.dead)
			var final *run.FinalError
			switch {
			case tt.fail == nil && err != nil:
				t.Fatalf("RewriteStatus: %v", err)
			case tt.fail != nil && (err == nil || errors.As(err, &final) != tt.final || fault.IsTransient(err) == tt.final):
				t.Errorf("RewriteStatus = %v, want final %v", err, tt.final)
			}
			edits := p.Repo.Edits()
			if tt.want == "" {
				if len(edits) != 0 {
					t.Errorf("edits %+v, want none", edits)
				}
				return
			}
			if len(edits) != 1 || edits[0].ID != tt.comment || !strings.Contains(edits[0].Body, tt.want) {
				t.Errorf("edits %+v, want comment %d saying %q", edits, tt.comment, tt.want)
			}
		})
	}
}

// TestStoreEnd: End moves a running run to a final state and asks for the promotion of the
// request waiting behind it, in one transaction; a run that is not running is left alone and
// promotes nothing; a Store made for reading cannot end a run.
func TestStoreEnd(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	ctx := context.Background()
	id := p.Label(t, 7)
	if ended, err := p.Store.End(ctx, id, run.StateFailed); err != nil || ended {
		t.Errorf("End of a queued run = %v, %v; want nothing ended", ended, err)
	}
	if _, err := p.Pool.Exec(ctx, `UPDATE runs SET state = 'running' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if ended, err := run.NewStore(p.Pool, nil).End(ctx, id, run.StateFailed); err == nil || ended {
		t.Errorf("a reading Store's End = %v, %v; want an error", ended, err)
	}
	if got := p.Row(t, id).State; got != run.StateRunning {
		t.Errorf("a failed End left the run %s", got)
	}
	if ended, err := p.Store.End(ctx, id, run.StateFailed); err != nil || !ended {
		t.Fatalf("End = %v, %v", ended, err)
	}
	p.RequireState(t, id, run.StateFailed)
	if ended, err := p.Store.End(ctx, id, run.StateFailed); err != nil || ended {
		t.Errorf("End of an ended run = %v, %v; want nothing ended", ended, err)
	}
	want := run.Ended{ID: id, InstallationID: runtest.Installation, RepoID: runtest.RepoID, Issue: 7}
	if got := p.Promoted(); len(got) != 1 || got[0] != want {
		t.Errorf("promotions %+v, want one for %+v", got, want)
	}
}
