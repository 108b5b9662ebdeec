// Package dbtest gives each test its own freshly migrated PostgreSQL schema on
// the server named by TEST_DATABASE_URL.
//
// It never skips: a test that needs Postgres fails loudly when the variable is
// unset or the server is unreachable. It must never touch any schema other
// than the one it created, and it drops that schema when the test ends.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations"
)

// EnvVar names the environment variable holding the test server's URL.
const EnvVar = "TEST_DATABASE_URL"

// New returns a pool whose search_path is a new, migrated schema (River's
// tables and ours). The pool is closed and the schema dropped in t.Cleanup.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool := NewEmpty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := migrations.Up(ctx, pool); err != nil {
		t.Fatalf("dbtest: migrating test schema: %v", err)
	}
	return pool
}

// NewEmpty is New without migrating: for testing migrations themselves.
func NewEmpty(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url := os.Getenv(EnvVar)
	if url == "" {
		t.Fatalf("dbtest: %s is not set; this test needs a real PostgreSQL "+
			"(e.g. postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable, see deploy/testenv)", EnvVar)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("dbtest: connecting to %s: %v (is the test PostgreSQL running?)", EnvVar, err)
	}
	schema := "test_" + randomHex(t)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close(ctx)
		t.Fatalf("dbtest: creating schema %s: %v", schema, err)
	}
	_ = admin.Close(ctx)

	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("dbtest: parsing %s: %v", EnvVar, err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("dbtest: creating pool: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("dbtest: connecting to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dbtest: dropping schema %s: %v", schema, err)
		}
	})
	return pool
}

// URL returns TEST_DATABASE_URL, failing the test when it is unset.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvVar)
	if url == "" {
		t.Fatalf("dbtest: %s is not set; this test needs a real PostgreSQL", EnvVar)
	}
	return url
}

func randomHex(t testing.TB) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("dbtest: random schema name: %v", err)
	}
	return hex.EncodeToString(b[:])
}
