// Package deploy tests the scripts of this folder for real: deploy/serve.sh's own PostgreSQL.
package deploy

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// freePort returns a loopback port nothing listens on (the script needs a number, not :0).
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serveOnce runs `make serve`'s script with no GitHub settings: it prepares PostgreSQL, then
// frognano serve refuses the configuration and the script ends; the cluster keeps running.
// The script's end is what it waits for: its `make build` alone can take many minutes on a
// busy machine, so the only bound is the test binary's -timeout (less a minute to say what the
// script printed).
func serveOnce(t *testing.T, data string, port int) string {
	t.Helper()
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, "./serve.sh")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"FROGNANO_DATA_DIR=" + data, "FROGNANO_PG_PORT=" + strconv.Itoa(port)}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		cmd.Env = append(cmd.Env, "DOCKER_HOST="+h)
	}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "PostgreSQL running on 127.0.0.1:"+strconv.Itoa(port)) && !strings.Contains(string(out), "starting frognano serve") {
		t.Fatalf("serve.sh did not prepare PostgreSQL:\n%s", out)
	}
	return string(out)
}

// connect connects to url and disconnects; the bound is for a server that does not answer.
func connect(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// TestServeDatabaseNeedsThePassword: the cluster `make serve` starts asks every connection
// for the generated password (kept 0600 in a 0700 folder), over TCP and over its socket, and a
// cluster an older frognano made with trust is switched over at the next start.
func TestServeDatabaseNeedsThePassword(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatal("this test runs serve.sh as root, as make serve runs on the test machine")
	}
	data := t.TempDir()
	os.Chmod(filepath.Dir(data), 0o755) // t.TempDir makes its folders 0700: the postgres user must pass
	os.Chmod(data, 0o755)
	port := freePort(t)
	pgDir := filepath.Join(data, "postgres")
	t.Cleanup(func() {
		bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(bins) > 0 {
			exec.Command("runuser", "-u", "postgres", "--", bins[0], "-D", filepath.Join(pgDir, "data"), "-m", "immediate", "stop").Run()
		}
	})

	// An older frognano's cluster: trust for everyone.
	initdb, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdb) == 0 {
		t.Fatal("PostgreSQL is not installed (deploy/testenv/setup.sh installs it)")
	}
	if err := os.MkdirAll(filepath.Join(pgDir, "sock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", "postgres:", pgDir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("runuser", "-u", "postgres", "--", initdb[0], "-D", filepath.Join(pgDir, "data"),
		"-A", "trust", "-U", "postgres", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v %s", err, out)
	}

	for round := 1; round <= 2; round++ { // the switch-over, then a plain restart of a running cluster
		serveOnce(t, data, port)
		pw, err := os.ReadFile(filepath.Join(pgDir, "password"))
		if err != nil {
			t.Fatalf("round %d: no password file: %v", round, err)
		}
		for path, want := range map[string]os.FileMode{filepath.Join(pgDir, "password"): 0o600, pgDir: 0o700, filepath.Join(pgDir, "sock"): 0o700} {
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
				t.Errorf("round %d: %s mode %v (%v), want %v", round, path, fi.Mode().Perm(), err, want)
			}
		}
		base := "127.0.0.1:" + strconv.Itoa(port) + "/frognano?sslmode=disable"
		if err := connect("postgres://postgres:" + string(pw) + "@" + base); err != nil {
			t.Errorf("round %d: with the password: %v", round, err)
		}
		// Each refusal must be the server's (or, for the socket, the file system's): a connection
		// that failed for another reason, such as a timeout, proves nothing.
		if err := connect("postgres://postgres@" + base); !passwordRefused(err) {
			t.Errorf("round %d: over TCP without the password: %v, want the server to refuse it", round, err)
		}
		if err := connect("postgres://postgres:wrong@" + base); !passwordRefused(err) {
			t.Errorf("round %d: with a wrong password: %v, want the server to refuse it", round, err)
		}
		// Another local user cannot even reach the socket; root, who can, still needs the password.
		out, err := exec.Command("runuser", "-u", "nobody", "--", "psql", "-h", filepath.Join(pgDir, "sock"), "-p", strconv.Itoa(port),
			"-U", "postgres", "-d", "frognano", "-w", "-tAc", "SELECT 1").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("round %d: nobody through the socket: %v %s, want permission denied", round, err, out)
		}
		if out, err := exec.Command("psql", "-h", filepath.Join(pgDir, "sock"), "-p", strconv.Itoa(port),
			"-U", "postgres", "-d", "frognano", "-w", "-tAc", "SELECT 1").CombinedOutput(); err == nil || !strings.Contains(string(out), "no password supplied") {
			t.Errorf("round %d: through the socket without the password: %v %s, want the server to ask for it", round, err, out)
		}
	}
}

// passwordRefused reports whether err is the server refusing a password: SQLSTATE 28P01.
func passwordRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "28P01"
}
