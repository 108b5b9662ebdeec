package env

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Locker makes builders of one environment take turns: Lock returns once the caller holds the
// lock for key (a hex string), or with ctx's error. The caller calls unlock exactly once.
type Locker interface {
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// FileLocker locks with flock(2) on a file per key in Dir: processes on one host (a service and
// `frognano run`, or two runs) take turns, and a lock ends with the process that held it. It is
// also what makes goroutines of one process take turns, since each Lock opens its own file.
type FileLocker struct {
	Dir string // created when missing
}

// lockPoll is how often a waiting FileLocker tries again: setups take minutes, a waiter
// wastes nothing by noticing a few hundred milliseconds late.
const lockPoll = 200 * time.Millisecond

// Lock implements Locker.
func (l FileLocker) Lock(ctx context.Context, key string) (func(), error) {
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the lock folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(l.Dir, "env-"+key+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the environment's lock file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("locking the environment: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another build of the same environment: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// both takes a (when not nil), then b, and releases them in reverse.
func both(ctx context.Context, a, b Locker, key string) (func(), error) {
	var ua func()
	if a != nil {
		var err error
		if ua, err = a.Lock(ctx, key); err != nil {
			return nil, err
		}
	}
	ub, err := b.Lock(ctx, key)
	if err != nil {
		if ua != nil {
			ua()
		}
		return nil, err
	}
	return func() {
		ub()
		if ua != nil {
			ua()
		}
	}, nil
}
