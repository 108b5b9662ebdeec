// Package migrations owns frognano's database schema: River's tables plus our
// own numbered, embedded SQL files (NNNN_name.up.sql / NNNN_name.down.sql),
// tracked in our own schema_migrations table.
//
// It must never change data outside schema changes, and never run a migration
// without holding the migration advisory lock: two processes starting at once
// must not race each other.
//
// Migrations run under an advisory lock (keyed by the current schema), so a
// second process starting at the same time waits and then finds nothing to do.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.sql
var files embed.FS

// lockKeySQL derives the advisory lock key from the current schema so that
// tests migrating many schemas in parallel do not serialise on one lock, while
// two processes migrating the same schema do.
const (
	lockKey          = `hashtextextended('frognano.migrations.' || coalesce(current_schema(), ''), 0)`
	lockKeySQL       = `SELECT pg_advisory_xact_lock(` + lockKey + `)`
	sessionLockSQL   = `SELECT pg_advisory_lock(` + lockKey + `)`
	sessionUnlockSQL = `SELECT pg_advisory_unlock(` + lockKey + `)`
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

// All returns the embedded migrations in version order.
func All() ([]Migration, error) {
	return load(files)
}

// Latest returns the highest embedded migration version.
func Latest() int {
	all, err := All()
	if err != nil || len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}

func load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.up.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".up.sql")
		num, label, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.up.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: bad version number", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", other, name, v)
		}
		seen[v] = name
		up, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading migration %q: %w", name, err)
		}
		down, err := fs.ReadFile(fsys, base+".down.sql")
		if err != nil {
			return nil, fmt.Errorf("reading down migration for %q: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: label, Up: string(up), Down: string(down)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

const createTrackingTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Up applies River's migrations and then ours, under a session advisory lock
// held on a dedicated connection. It is idempotent and safe to call from
// several processes at once: the second waits for the lock and then finds
// nothing to do. Our migrations are applied in one transaction; River's run in
// its own transactions, one per version, because River's version 6 adds an
// enum value that cannot be used in the transaction that added it.
// Tables are created in the pool's current schema (search_path). The pool
// needs at least two connections.
func Up(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := All()
	if err != nil {
		return err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("creating River migrator: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquiring migration connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, sessionLockSQL); err != nil {
		return fmt.Errorf("taking migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx is done,
		// or the pooled connection would keep holding it.
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(unlockCtx, sessionUnlockSQL); err != nil {
			// Closing the connection ends the session and frees the lock.
			_ = conn.Conn().Close(unlockCtx)
		}
	}()

	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("applying River migrations: %w", err)
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, createTrackingTable); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range all {
			if applied[m.Version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.Up); err != nil {
				return fmt.Errorf("applying migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("recording migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrating database up: %w", err)
	}
	return nil
}

// Down reverts our migrations above target (0 reverts all of ours). River's
// tables are left in place: they may be shared, and River has its own CLI.
func Down(ctx context.Context, pool *pgxpool.Pool, target int) error {
	all, err := All()
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockKeySQL); err != nil {
			return fmt.Errorf("taking migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, createTrackingTable); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for i := len(all) - 1; i >= 0; i-- {
			m := all[i]
			if m.Version <= target || !applied[m.Version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.Down); err != nil {
				return fmt.Errorf("reverting migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM schema_migrations WHERE version = $1`, m.Version); err != nil {
				return fmt.Errorf("unrecording migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrating database down to %d: %w", target, err)
	}
	return nil
}

// ErrNotMigrated is returned by Check when the schema is behind this binary.
var ErrNotMigrated = errors.New("database is not migrated to the latest version")

// Check reports whether River's migrations and ours are all applied (for
// /readyz). It returns an error wrapping ErrNotMigrated when they are not.
func Check(ctx context.Context, pool *pgxpool.Pool) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("creating River migrator: %w", err)
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("validating River migrations: %w", err)
	}
	if !res.OK {
		return fmt.Errorf("%w: River: %s", ErrNotMigrated, strings.Join(res.Messages, "; "))
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("looking for schema_migrations: %w", err)
	}
	if !exists {
		return fmt.Errorf("%w: schema_migrations is missing", ErrNotMigrated)
	}
	var current int
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if latest := Latest(); current < latest {
		return fmt.Errorf("%w: at version %d, want %d", ErrNotMigrated, current, latest)
	}
	return nil
}

// Pending is what Up would apply to a database.
type Pending struct {
	// River holds River's migration versions that are not applied, in order.
	River []int
	// Ours holds frognano's migrations that are not applied, in version order.
	Ours []Migration
}

// None reports whether Up has nothing to apply.
func (p Pending) None() bool { return len(p.River) == 0 && len(p.Ours) == 0 }

// PendingMigrations reports what Up would apply now, by the same rule Up applies them (every
// version not recorded as applied). It only reads: a missing River or schema_migrations
// table means all of that side is pending, and nothing is created.
func PendingMigrations(ctx context.Context, pool *pgxpool.Pool) (Pending, error) {
	all, err := All()
	if err != nil {
		return Pending{}, err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return Pending{}, fmt.Errorf("creating River migrator: %w", err)
	}
	existing, err := migrator.ExistingVersions(ctx)
	if err != nil {
		return Pending{}, fmt.Errorf("reading River's applied migrations: %w", err)
	}
	riverApplied := make(map[int]bool, len(existing))
	for _, m := range existing {
		riverApplied[m.Version] = true
	}
	var p Pending
	for _, m := range migrator.AllVersions() {
		if !riverApplied[m.Version] {
			p.River = append(p.River, m.Version)
		}
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return Pending{}, fmt.Errorf("looking for schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	if exists {
		if applied, err = appliedVersions(ctx, pool); err != nil {
			return Pending{}, err
		}
	}
	for _, m := range all {
		if !applied[m.Version] {
			p.Ours = append(p.Ours, m)
		}
	}
	return p, nil
}

// querier is what appliedVersions reads with: a transaction in Up and Down, the pool in
// PendingMigrations.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func appliedVersions(ctx context.Context, tx querier) (map[int]bool, error) {
	rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("reading applied migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("reading applied migrations: %w", err)
	}
	out := make(map[int]bool, len(versions))
	for _, v := range versions {
		out[v] = true
	}
	return out, nil
}
