package sandbox

import (
	"context"
	"errors"
	"testing"
)

// TestSlots: a full Slots makes the next sandbox wait until one is released or its context
// ends; nil bounds nothing.
func TestSlots(t *testing.T) {
	t.Parallel()
	s := NewSlots(2)
	ctx := context.Background()
	for range 2 {
		if err := s.acquire(ctx, "agent", nil); err != nil {
			t.Fatal(err)
		}
	}
	if s.InUse() != 2 || s.Cap() != 2 {
		t.Fatalf("in use %d of %d, want 2 of 2", s.InUse(), s.Cap())
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.acquire(cancelled, "agent", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire on a full Slots = %v, want it to wait until cancelled", err)
	}
	got := make(chan error)
	go func() { got <- s.acquire(ctx, "agent", nil) }()
	s.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	var none *Slots
	if NewSlots(0) != nil || none.acquire(cancelled, "agent", nil) != nil || none.Cap() != 0 || none.InUse() != 0 {
		t.Error("no bound must never wait")
	}
	none.release()
}

// TestSlotsReportWaits: a sandbox that finds every slot held is told so (what it is for, how
// many of how many are in use), and told again, with its purpose alone, once it has its slot
// or gave up; one that takes a free slot at once reports nothing.
func TestSlotsReportWaits(t *testing.T) {
	t.Parallel()
	s := NewSlots(1)
	ctx := context.Background()
	waits := make(chan SlotWait, 4)
	report := func(w SlotWait) { waits <- w }
	if err := s.acquire(ctx, "agent", report); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 0 {
		t.Fatalf("a free slot was reported as a wait: %+v", <-waits)
	}
	got := make(chan error)
	go func() { got <- s.acquire(ctx, "tests-before", report) }()
	w := <-waits // the wait begins before the slot is given back: no timing involved
	if want := (SlotWait{Purpose: "tests-before", InUse: 1, Cap: 1}); w != want || !w.Waiting() || w.For() != "the tests before" {
		t.Fatalf("wait %+v (%q), want %+v", w, w.For(), want)
	}
	s.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if w := <-waits; w != (SlotWait{Purpose: "tests-before"}) || w.Waiting() {
		t.Fatalf("the end of the wait was reported as %+v, want its purpose alone", w)
	}

	// A wait that ends with its context ends the note too.
	cancelled, cancel := context.WithCancel(ctx)
	go func() { got <- s.acquire(cancelled, PurposeSetup, report) }()
	if w := <-waits; w.For() != "the repository's setup" {
		t.Fatalf("wait %+v", w)
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire = %v, want cancelled", err)
	}
	if w := <-waits; w != (SlotWait{Purpose: PurposeSetup}) {
		t.Fatalf("a wait given up was reported as %+v, want its purpose alone", w)
	}
}
