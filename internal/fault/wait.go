package fault

import (
	"context"
	"time"
)

// Wait waits d before a step is tried again, or until ctx is done, whichever comes first; it
// returns ctx's error when ctx ended the wait (at once when d is not positive and ctx is done).
// It is the default wait of every retry loop (githubapp's, the model client's, the metrics'
// counted GitHub wait).
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
