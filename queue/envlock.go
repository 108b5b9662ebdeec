package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/runner/env"
)

// EnvLock is the lock that makes the workers of every host that shares a Docker engine and this
// database build each repository environment once (runner/env Config.SharedLock): a session
// advisory lock keyed by the environment's hash, held on a connection of its own for as long
// as the build. A worker that dies releases it with its connection.
func EnvLock(pool *pgxpool.Pool) env.Locker { return envLock{pool} }

type envLock struct{ pool *pgxpool.Pool }

// envLockKey is the advisory lock's key for an environment's hash: a namespace of its own, so
// it never meets the installation or migration locks.
const envLockKey = `hashtextextended('frognano.environment.' || $1::text, 0)`

// unlockTimeout bounds the unlock, which runs after the caller's context may have ended.
const unlockTimeout = 10 * time.Second

func (l envLock) Lock(ctx context.Context, key string) (func(), error) {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("taking a connection for the environment lock: %w", err)
	}
	// Waits for the build of the same environment by another worker; ends with ctx (pgx
	// cancels the query on the server).
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+envLockKey+`)`, key); err != nil {
		// The connection may still be waiting on the server: it must not go back to the pool.
		conn.Conn().Close(context.Background())
		conn.Release()
		return nil, fmt.Errorf("waiting for another worker's build of the same environment: %w", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+envLockKey+`)`, key); err != nil {
			// Closing the session releases its advisory locks.
			conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}
