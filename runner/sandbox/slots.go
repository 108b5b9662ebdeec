package sandbox

import (
	"context"
	"fmt"
)

// Slots bounds how many sandboxes exist at once across every Config that shares it
// (FROGNANO_MAX_SANDBOXES): each container New or NewSetup makes holds one slot from before
// its create request until Close has removed it, whatever it is for (an agent, a test run, a
// setup). A sandbox's disk watcher is counted with its sandbox, and a pin (a created, never
// started container that holds no memory) is not counted. A nil *Slots bounds nothing.
//
// Nothing that holds a slot waits for another one: a run's agent sandbox is closed before its
// tests-after sandbox is made, and the before-run, shared by a run's attempts, holds its own.
// So sandboxes only queue, they never deadlock, whatever the bound (1 included).
type Slots struct{ c chan struct{} }

// NewSlots returns n slots; n <= 0 returns nil (no bound).
func NewSlots(n int) *Slots {
	if n <= 0 {
		return nil
	}
	return &Slots{c: make(chan struct{}, n)}
}

// Cap is the bound, 0 for none.
func (s *Slots) Cap() int {
	if s == nil {
		return 0
	}
	return cap(s.c)
}

// InUse is how many slots are held now.
func (s *Slots) InUse() int {
	if s == nil {
		return 0
	}
	return len(s.c)
}

// SlotWait is a sandbox waiting for a free slot, as Config.OnSlotWait reports it. One with
// Cap 0 (only Purpose set) is the end of that sandbox's wait: it has its slot, or gave up (its
// context ended).
type SlotWait struct {
	Purpose string // what the sandbox is for: "agent", "tests-before", "tests-after", "setup"
	InUse   int    // slots held when the wait began (all of them)
	Cap     int    // the bound
}

// Waiting reports whether w is a wait (not the end of one).
func (w SlotWait) Waiting() bool { return w.Cap > 0 }

// For is what the waiting sandbox is for, as a person reads it ("the tests before").
func (w SlotWait) For() string {
	switch w.Purpose {
	case "agent":
		return "the agent"
	case "tests-before":
		return "the tests before"
	case "tests-after":
		return "the tests after"
	case PurposeSetup:
		return "the repository's setup"
	}
	return w.Purpose
}

// acquire takes a slot, waiting until one is free or ctx ends. A wait (the slots all held
// when it asks) is told to onWait, when set, once as it begins and once as it ends (a
// SlotWait with only Purpose set); a slot taken at once is not a wait.
func (s *Slots) acquire(ctx context.Context, purpose string, onWait func(SlotWait)) error {
	if s == nil {
		return nil
	}
	select {
	case s.c <- struct{}{}:
		return nil
	default:
	}
	if onWait != nil {
		onWait(SlotWait{Purpose: purpose, InUse: len(s.c), Cap: cap(s.c)})
		defer onWait(SlotWait{Purpose: purpose})
	}
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a free sandbox slot (%d in use): %w", cap(s.c), ctx.Err())
	}
}

func (s *Slots) release() {
	if s != nil {
		<-s.c
	}
}
