package migrations_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations"
	"github.com/frognano/frognano/migrations/dbtest"
)

func TestAllEmbeddedMigrationsHaveUpAndDown(t *testing.T) {
	t.Parallel()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no embedded migrations")
	}
	for i, m := range all {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d: versions must be contiguous from 1", i, m.Version)
		}
		if m.Up == "" || m.Down == "" {
			t.Errorf("migration %04d_%s: empty up or down", m.Version, m.Name)
		}
	}
	if got := migrations.Latest(); got != all[len(all)-1].Version {
		t.Errorf("Latest() = %d, want %d", got, all[len(all)-1].Version)
	}
}

func TestUpIsIdempotentAndCheckFollowsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewEmpty(t)

	if err := migrations.Check(ctx, pool); !errors.Is(err, migrations.ErrNotMigrated) {
		t.Fatalf("Check on empty schema = %v, want ErrNotMigrated", err)
	}
	for i := range 2 {
		if err := migrations.Up(ctx, pool); err != nil {
			t.Fatalf("Up #%d: %v", i+1, err)
		}
	}
	if err := migrations.Check(ctx, pool); err != nil {
		t.Fatalf("Check after Up: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != migrations.Latest() {
		t.Errorf("schema_migrations has %d rows, want %d", n, migrations.Latest())
	}
	// River's tables live in the same schema.
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&n); err != nil {
		t.Fatalf("River tables missing: %v", err)
	}
}

// TestPendingMigrationsIsWhatUpApplies: everything on an empty schema (which it leaves
// empty), nothing after Up, and exactly the reverted ones after Down.
func TestPendingMigrationsIsWhatUpApplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewEmpty(t)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}

	p, err := migrations.PendingMigrations(ctx, pool)
	if err != nil {
		t.Fatalf("PendingMigrations on an empty schema: %v", err)
	}
	if len(p.River) == 0 || p.River[0] != 1 || len(p.Ours) != len(all) || p.None() {
		t.Errorf("empty schema: River %v, ours %d of %d", p.River, len(p.Ours), len(all))
	}
	var tables int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("PendingMigrations created %d tables", tables)
	}

	if err := migrations.Up(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if p, err := migrations.PendingMigrations(ctx, pool); err != nil || !p.None() {
		t.Errorf("after Up: %+v, %v; want none", p, err)
	}

	latest := migrations.Latest()
	if err := migrations.Down(ctx, pool, latest-2); err != nil {
		t.Fatal(err)
	}
	p, err = migrations.PendingMigrations(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.River) != 0 || len(p.Ours) != 2 || p.Ours[0].Version != latest-1 || p.Ours[1].Version != latest {
		t.Errorf("after Down to %d: River %v, ours %+v", latest-2, p.River, p.Ours)
	}
}

func TestUpFromManyProcessesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewEmpty(t)

	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			errs <- migrations.Up(ctx, pool)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Up: %v", err)
		}
	}
	if err := migrations.Check(ctx, pool); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

func TestDownThenUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)

	if err := migrations.Down(ctx, pool, 0); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := migrations.Check(ctx, pool); !errors.Is(err, migrations.ErrNotMigrated) {
		t.Fatalf("Check after Down = %v, want ErrNotMigrated", err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('runs') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("runs table survived Down")
	}
	if err := migrations.Up(ctx, pool); err != nil {
		t.Fatalf("Up after Down: %v", err)
	}
	if err := migrations.Check(ctx, pool); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// insertRun inserts a run of issue 7 of repository 42 in state.
func insertRun(ctx context.Context, pool *pgxpool.Pool, state string) error {
	_, err := pool.Exec(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler, state)
		VALUES ('integration:1', gen_random_uuid()::text, 1, 42, 'o', 'r', 7, 'u', $1)`, state)
	return err
}

func TestAtMostOneActiveRunPerIssue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)

	insert := func(state string) error { return insertRun(ctx, pool, state) }
	tests := []struct {
		state   string
		wantErr bool
	}{
		{"succeeded", false},
		{"queued", false},
		{"running", true}, // a queued run already exists
		{"queued", true},
		{"failed", false},
		{"cancelled", false},
	}
	for _, tt := range tests {
		err := insert(tt.state)
		var pgErr *pgconn.PgError
		gotUnique := errors.As(err, &pgErr) && pgErr.Code == "23505"
		if tt.wantErr != gotUnique {
			t.Errorf("insert %s: err = %v, want unique violation: %v", tt.state, err, tt.wantErr)
		}
	}
}

func TestCheckFailsOnClosedPool(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := migrations.Check(ctx, pool); err == nil {
		t.Fatal("Check on a closed pool succeeded")
	}
}

// TestWaitingRunsAreNotActive: a waiting run (0009) is not active, so several can wait beside
// the active run of an issue; going down to 0008 cancels them, since that schema cannot hold them.
func TestWaitingRunsAreNotActive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)

	insert := func(state string) error { return insertRun(ctx, pool, state) }
	for _, state := range []string{"queued", "waiting", "waiting"} {
		if err := insert(state); err != nil {
			t.Fatalf("insert %s: %v", state, err)
		}
	}
	if err := insert("bogus"); err == nil {
		t.Error("a run in state bogus was stored")
	}
	if err := migrations.Down(ctx, pool, 8); err != nil {
		t.Fatalf("Down to 8: %v", err)
	}
	var waiting, cancelled int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'waiting'), count(*) FILTER (WHERE state = 'cancelled') FROM runs`).Scan(&waiting, &cancelled); err != nil {
		t.Fatal(err)
	}
	if waiting != 0 || cancelled != 2 {
		t.Errorf("after Down: %d waiting, %d cancelled; want 0 and 2", waiting, cancelled)
	}
	if err := migrations.Up(ctx, pool); err != nil {
		t.Fatalf("Up again: %v", err)
	}
}
