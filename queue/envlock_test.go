package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frognano/frognano/migrations/dbtest"
)

func randomKey(t *testing.T) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Workers of two hosts (two pools on one database) take turns on one environment; a waiter
// gives up with its context; another environment does not wait; a worker that dies while
// holding the lock releases it.
func TestEnvLockAcrossWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hostA, hostB := EnvLock(dbtest.New(t)), EnvLock(dbtest.New(t))
	key := randomKey(t)

	unlockA, err := hostA.Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var bHolds atomic.Bool
	done := make(chan error, 1)
	go func() {
		unlockB, err := hostB.Lock(ctx, key)
		if err == nil {
			bHolds.Store(true)
			unlockB()
		}
		done <- err
	}()
	other, err := hostB.Lock(ctx, randomKey(t))
	if err != nil {
		t.Fatal(err)
	}
	other()
	time.Sleep(300 * time.Millisecond) // give B every chance to get in wrongly
	if bHolds.Load() {
		t.Fatal("B took the lock while A held it")
	}
	unlockA()
	select {
	case err := <-done:
		if err != nil || !bHolds.Load() {
			t.Fatalf("B after A's unlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B still waits after A's unlock")
	}

	// A waiter gives up with its context, and its pool stays usable.
	unlockA, err = hostA.Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := hostB.Lock(waitCtx, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
	unlockA()
	unlockB, err := hostB.Lock(ctx, key)
	if err != nil {
		t.Fatalf("after a cancelled wait: %v", err)
	}
	unlockB()

	// A worker whose connection dies (its host crashed) loses the lock with its session.
	poolC := dbtest.New(t)
	unlockC, err := EnvLock(poolC).Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poolC.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
		AND objid = (`+envLockKey+` & x'ffffffff'::bigint)::oid`, key); err != nil {
		t.Fatal(err)
	}
	lockCtx, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	unlockB, err = hostB.Lock(lockCtx, key)
	if err != nil {
		t.Fatalf("the lock of a dead session was not released: %v", err)
	}
	unlockB()
	unlockC() // on a dead connection: it must still give the connection back
}
