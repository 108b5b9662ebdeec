package doctor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations"
	"github.com/frognano/frognano/migrations/dbtest"
)

// schemaURL is TEST_DATABASE_URL with its search_path set to the schema of pool, as an
// operator's DATABASE_URL would name it.
func schemaURL(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var schema string
	if err := pool.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatalf("reading the test schema: %v", err)
	}
	return withSearchPath(dbtest.URL(t), schema)
}

func withSearchPath(url, schema string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
}

// ourNames is "0001_init, 0002_..." for our migrations from version from on.
func ourNames(t *testing.T, from int) string {
	t.Helper()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range all[from-1:] {
		names = append(names, fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return strings.Join(names, ", ")
}

// riverVersions is what a fresh schema lacks of River's: all of them, "1-N".
func riverVersions(t *testing.T) string {
	t.Helper()
	p, err := migrations.PendingMigrations(context.Background(), dbtest.NewEmpty(t))
	if err != nil {
		t.Fatal(err)
	}
	return versionRanges(p.River)
}

func TestDatabaseMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	river := riverVersions(t)
	if !strings.HasPrefix(river, "1-") {
		t.Fatalf("River's versions of a fresh schema = %q, want 1-N", river)
	}
	latest := migrations.Latest()

	t.Run("Migrated", func(t *testing.T) {
		t.Parallel()
		for _, auto := range []bool{true, false} {
			r := Database(ctx, schemaURL(t, dbtest.New(t)), auto, "serve")
			if r.Status != Pass || !strings.HasSuffix(r.Detail, fmt.Sprintf(", migrations applied (frognano schema version %d)", latest)) {
				t.Errorf("auto-migrate %v: %v %q", auto, r.Status, r.Detail)
			}
		}
	})
	t.Run("EmptyWithAutoMigrate", func(t *testing.T) {
		t.Parallel()
		empty := dbtest.NewEmpty(t)
		r := Database(ctx, schemaURL(t, empty), true, "serve")
		want := "not migrated yet: `frognano serve` applies River's migrations " + river + " and frognano's " + ourNames(t, 1) + " at start (FROGNANO_AUTO_MIGRATE)"
		if r.Status != Pass || !strings.HasSuffix(r.Detail, want) {
			t.Errorf("got %v %q\nwant ok ending %q", r.Status, r.Detail, want)
		}
		// doctor only reads: the schema is still empty, and serve would still migrate it.
		var tables int
		if err := empty.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("doctor left %d tables in the empty schema", tables)
		}
	})
	t.Run("EmptyWithoutAutoMigrate", func(t *testing.T) {
		t.Parallel()
		r := Database(ctx, schemaURL(t, dbtest.NewEmpty(t)), false, "serve")
		wantDetail := "River's migrations " + river + " and frognano's " + ourNames(t, 1) + " are not applied, and with FROGNANO_AUTO_MIGRATE=false `frognano serve` does not apply them: it refuses to start"
		if r.Status != Fail || !strings.HasSuffix(r.Detail, wantDetail) || r.Fix != "run `frognano migrate` (or leave FROGNANO_AUTO_MIGRATE on)" {
			t.Errorf("got %v %q (fix %q)\nwant FAIL ending %q", r.Status, r.Detail, r.Fix, wantDetail)
		}
	})
	t.Run("BehindWithAutoMigrate", func(t *testing.T) {
		t.Parallel()
		pool := dbtest.New(t)
		if err := migrations.Down(ctx, pool, latest-2); err != nil {
			t.Fatalf("migrating down to %d: %v", latest-2, err)
		}
		r := Database(ctx, schemaURL(t, pool), true, "worker")
		want := "not migrated yet: `frognano worker` applies frognano's migrations " + ourNames(t, latest-1) + " at start (FROGNANO_AUTO_MIGRATE)"
		if r.Status != Pass || !strings.HasSuffix(r.Detail, want) {
			t.Errorf("got %v %q\nwant ok ending %q", r.Status, r.Detail, want)
		}
	})
	t.Run("NoSchemaToMigrateInto", func(t *testing.T) {
		t.Parallel()
		// A search_path naming a schema that does not exist: serve's migrations would fail
		// with "no schema has been selected to create in", so doctor fails now.
		r := Database(ctx, withSearchPath(dbtest.URL(t), "doctor_no_such_schema"), true, "serve")
		if r.Status != Fail || !strings.Contains(r.Detail, "the search_path names no existing schema") {
			t.Errorf("got %v %q", r.Status, r.Detail)
		}
	})
}

func TestVersionRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{{[]int{1, 2, 3, 4, 5, 6}, "1-6"}, {[]int{1, 2, 3, 5}, "1-3, 5"}, {[]int{4}, "4"}, {[]int{2, 4, 5}, "2, 4-5"}} {
		if got := versionRanges(tc.in); got != tc.want {
			t.Errorf("versionRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
