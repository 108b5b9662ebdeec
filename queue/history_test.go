package queue

import (
	"context"
	"errors"
	"testing"
)

func TestRunHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := b.accept(t, 7)
	if r := b.work(t, done, 1); !r.completed() {
		t.Fatalf("Work: %v", r)
	}
	queued := b.accept(t, 8)

	list, err := ListRuns(context.Background(), b.pool, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != queued.RunID || list[1].ID != done.RunID {
		t.Fatalf("ListRuns = %+v, want the two runs, newest first", list)
	}
	if list[1].State != StateSucceeded || list[1].PRURL == "" || list[1].Steps != 12 || list[0].State != StateQueued {
		t.Errorf("list = %+v", list)
	}
	if one, err := ListRuns(context.Background(), b.pool, 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d runs, %v", len(one), err)
	}

	r, err := GetRun(context.Background(), b.pool, done.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Report != "reporttext" || len(r.Trajectory) == 0 || len(r.Patch) == 0 || r.FinishedAt == nil {
		t.Errorf("GetRun = report %q, trajectory %d bytes, patch %d bytes, finished %v", r.Report, len(r.Trajectory), len(r.Patch), r.FinishedAt)
	}
	if _, err := GetRun(context.Background(), b.pool, 999999); !errors.Is(err, ErrNoRun) {
		t.Errorf("GetRun of a missing run: %v, want ErrNoRun", err)
	}
}
