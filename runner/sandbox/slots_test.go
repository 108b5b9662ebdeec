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
		if err := s.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if s.InUse() != 2 || s.Cap() != 2 {
		t.Fatalf("in use %d of %d, want 2 of 2", s.InUse(), s.Cap())
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.acquire(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire on a full Slots = %v, want it to wait until cancelled", err)
	}
	got := make(chan error)
	go func() { got <- s.acquire(ctx) }()
	s.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	var none *Slots
	if NewSlots(0) != nil || none.acquire(cancelled) != nil || none.Cap() != 0 || none.InUse() != 0 {
		t.Error("no bound must never wait")
	}
	none.release()
}
