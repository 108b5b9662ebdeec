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

// acquire takes a slot, waiting until one is free or ctx ends.
func (s *Slots) acquire(ctx context.Context) error {
	if s == nil {
		return nil
	}
	select {
	case s.c <- struct{}{}:
		return nil
	default:
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
