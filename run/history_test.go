package run_test

import (
	"context"
	"errors"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

func TestRunHistory(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	done := p.Label(t, 7)
	if r := p.Work(t, done, 1); !r.Completed() {
		t.Fatalf("Work: %v", r)
	}
	queued := p.Label(t, 8)

	list, err := run.NewStore(p.Pool, nil).Runs(context.Background(), run.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != queued || list[1].ID != done {
		t.Fatalf("ListRuns = %+v, want the two runs, newest first", list)
	}
	if list[1].State != run.StateSucceeded || list[1].PRURL == "" || list[1].Steps != 12 || list[0].State != run.StateQueued {
		t.Errorf("list = %+v", list)
	}
	if one, err := run.NewStore(p.Pool, nil).Runs(context.Background(), run.Filter{Limit: 1}); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d runs, %v", len(one), err)
	}

	r, err := run.NewStore(p.Pool, nil).Run(context.Background(), done)
	if err != nil {
		t.Fatal(err)
	}
	if r.Report != "reporttext" || len(r.Trajectory) == 0 || len(r.Patch) == 0 || r.FinishedAt == nil {
		t.Errorf("GetRun = report %q, trajectory %d bytes, patch %d bytes, finished %v", r.Report, len(r.Trajectory), len(r.Patch), r.FinishedAt)
	}
	if _, err := run.NewStore(p.Pool, nil).Run(context.Background(), 999999); !errors.Is(err, run.ErrNoRun) {
		t.Errorf("GetRun of a missing run: %v, want run.ErrNoRun", err)
	}
}
