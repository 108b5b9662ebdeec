package doctor

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/dockerproxy"
	"github.com/frognano/frognano/migrations"
	"github.com/frognano/frognano/runner/sandbox"
)

// minDockerAPI is the oldest Engine API version frognano is tested with (Docker 20.10).
const minDockerAPI = "1.41"

// Database connects to url and checks that River's migrations and frognano's are applied.
// When some are not, what counts is whether the process will apply them: with autoMigrate
// (FROGNANO_AUTO_MIGRATE, on by default) `frognano starter` (serve or worker) applies them
// at start, so a fresh database passes and the detail names what will be applied, provided
// the connection has a schema it may create tables in; without autoMigrate the process
// refuses to start, so the check fails and names `frognano migrate`.
func Database(ctx context.Context, url string, autoMigrate bool, starter string) Result {
	const name = "database"
	return timed(ctx, 15*time.Second, func(ctx context.Context) Result {
		pcfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			return fail(name, "DATABASE_URL is not a valid PostgreSQL connection string", "set DATABASE_URL, e.g. postgres://frognano@localhost:5432/frognano")
		}
		pcfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return fail(name, "connecting to PostgreSQL: "+err.Error(), "check DATABASE_URL")
		}
		defer pool.Close()
		var version string
		if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
			host := pcfg.ConnConfig.Host
			return fail(name, fmt.Sprintf("PostgreSQL at %s:%d does not answer: %s", host, pcfg.ConnConfig.Port, clip(rootCause(err), 200)),
				"start PostgreSQL (make serve starts a local one), or fix DATABASE_URL")
		}
		pending, err := migrations.PendingMigrations(ctx, pool)
		if err != nil {
			return fail(name, fmt.Sprintf("PostgreSQL %s answers, but reading its migrations: %v", version, err), "check that DATABASE_URL's user may read its schema")
		}
		if pending.None() {
			return pass(name, fmt.Sprintf("PostgreSQL %s, migrations applied (frognano schema version %d)", version, migrations.Latest()))
		}
		what := pendingText(pending)
		if !autoMigrate {
			return fail(name, fmt.Sprintf("PostgreSQL %s answers, but %s are not applied, and with FROGNANO_AUTO_MIGRATE=false `frognano %s` does not apply them: it refuses to start", version, what, starter),
				"run `frognano migrate` (or leave FROGNANO_AUTO_MIGRATE on)")
		}
		// Up creates its tables in current_schema(); serve would fail at start without one
		// it may create in, so that is the failure to report now.
		var schema *string
		var canCreate bool
		if err := pool.QueryRow(ctx, `SELECT current_schema(), coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)`).Scan(&schema, &canCreate); err != nil {
			return fail(name, fmt.Sprintf("PostgreSQL %s answers, but reading the current schema: %v", version, err), "check DATABASE_URL")
		}
		switch {
		case schema == nil:
			return fail(name, fmt.Sprintf("PostgreSQL %s answers, but %s are to be applied and the search_path names no existing schema to create them in", version, what),
				"create the schema, or fix search_path in DATABASE_URL")
		case !canCreate:
			return fail(name, fmt.Sprintf("PostgreSQL %s answers, but %s are to be applied and this user may not create tables in schema %s", version, what, *schema),
				fmt.Sprintf("GRANT CREATE ON SCHEMA %s to DATABASE_URL's user, or run `frognano migrate` as one who may", *schema))
		}
		return pass(name, fmt.Sprintf("PostgreSQL %s, not migrated yet: `frognano %s` applies %s at start (FROGNANO_AUTO_MIGRATE)", version, starter, what))
	})
}

// pendingText names what Up would apply: "River's migrations 1-6 and frognano's 0001_init,
// 0002_run_headline".
func pendingText(p migrations.Pending) string {
	var parts []string
	if len(p.River) > 0 {
		parts = append(parts, "River's migrations "+versionRanges(p.River))
	}
	if len(p.Ours) > 0 {
		names := make([]string, len(p.Ours))
		for i, m := range p.Ours {
			names[i] = fmt.Sprintf("%04d_%s", m.Version, m.Name)
		}
		prefix := "frognano's migrations "
		if len(parts) > 0 {
			prefix = "frognano's "
		}
		parts = append(parts, prefix+strings.Join(names, ", "))
	}
	return strings.Join(parts, " and ")
}

// versionRanges writes ascending versions with runs joined: [1 2 3 5] is "1-3, 5".
func versionRanges(vs []int) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(vs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", vs[i], vs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// Docker checks that an engine answers (DOCKER_HOST or the default socket) and speaks at
// least minDockerAPI. On success it returns the client, which the caller closes.
func Docker(ctx context.Context) (Result, *client.Client) {
	const name = "docker"
	var docker *client.Client
	r := timed(ctx, 15*time.Second, func(ctx context.Context) Result {
		c, err := sandbox.NewClient()
		if err != nil {
			return fail(name, err.Error(), "start the engine (systemctl start docker) or point DOCKER_HOST at one")
		}
		v, err := c.ServerVersion(ctx)
		if err != nil {
			c.Close()
			return fail(name, "reading the engine's version: "+err.Error(), "check DOCKER_HOST")
		}
		if !apiAtLeast(v.APIVersion, minDockerAPI) {
			c.Close()
			return fail(name, fmt.Sprintf("Docker %s speaks Engine API %s, older than %s", v.Version, v.APIVersion, minDockerAPI), "upgrade the engine to Docker 20.10 or newer")
		}
		docker = c
		how := "the engine's own API: whoever runs frognano is root on the engine's host; put frognano docker-proxy in front (docs/operations.md, \"Which Docker engine\")"
		for _, comp := range v.Components {
			if comp.Name == dockerproxy.ComponentName {
				how = "through frognano docker-proxy"
			}
		}
		return pass(name, fmt.Sprintf("Docker %s (Engine API %s) at %s, %s", v.Version, v.APIVersion, c.DaemonHost(), how))
	})
	return r, docker
}

// apiAtLeast compares Engine API versions such as "1.41" and "1.47".
func apiAtLeast(have, want string) bool {
	hMaj, hMin, ok1 := strings.Cut(have, ".")
	wMaj, wMin, ok2 := strings.Cut(want, ".")
	if !ok1 || !ok2 {
		return false
	}
	a, _ := strconv.Atoi(hMaj)
	b, _ := strconv.Atoi(wMaj)
	if a != b {
		return a > b
	}
	c, _ := strconv.Atoi(hMin)
	d, _ := strconv.Atoi(wMin)
	return c >= d
}

// Image checks that the sandbox image is present on the engine.
func Image(ctx context.Context, docker *client.Client, image string) Result {
	const name = "sandbox-image"
	return timed(ctx, 15*time.Second, func(ctx context.Context) Result {
		if err := ImagePresent(ctx, docker, image); err != nil {
			return fail(name, err.Error(), "build it: `frognano sandbox build` (or `make sandbox-image` in a checkout), or set FROGNANO_SANDBOX_IMAGE")
		}
		return pass(name, image+" present")
	})
}

// ImagePresent is the cheap image check that /readyz shares.
func ImagePresent(ctx context.Context, docker *client.Client, image string) error {
	if _, err := docker.ImageInspect(ctx, image); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("sandbox image %s is missing", image)
		}
		return fmt.Errorf("inspecting sandbox image %s: %w", image, err)
	}
	return nil
}

// Executor checks that the tool executor is a static Linux program (it is copied into
// sandboxes that have no dynamic loader of its kind).
func Executor(path string) Result {
	const name = "executor"
	f, err := elf.Open(path)
	if err != nil {
		return fail(name, fmt.Sprintf("%s is not usable: %v", path, err), "build it with `make build`, or point FROGNANO_EXECUTOR at it")
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fail(name, path+" is dynamically linked", "build it with CGO_ENABLED=0 (`make build` does)")
		}
	}
	return pass(name, path+" is a static program")
}

// Sandbox starts one real sandbox with cfg (the service's image and limits) and checks from
// inside what the isolation tests check: only the loopback interface, a read-only root
// file system, a non-root user. The sandbox is removed before Sandbox returns.
func Sandbox(ctx context.Context, docker *client.Client, cfg sandbox.Config) Result {
	const name = "sandbox"
	return timed(ctx, 2*time.Minute, func(ctx context.Context) Result {
		cfg.Owner = "doctor@" + cfg.Owner
		cfg.Instance = ""
		cfg.Lifetime = 2 * time.Minute
		cfg.Memory = min(cfg.Memory, 512<<20)
		cfg.Disk = min(cfg.Disk, 256<<20)
		start := time.Now()
		sb, err := sandbox.New(ctx, docker, cfg, "doctor", "doctor")
		if err != nil {
			return fail(name, "starting a sandbox: "+err.Error(), "see `docker info`; the engine must run containers with --network none and a read-only root")
		}
		defer sb.Close()
		ready := time.Since(start)
		script := `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '; echo; id -u; if touch /.frognano-doctor 2>/dev/null; then echo writable; else echo read-only; fi`
		res, err := sb.Exec(ctx, []string{"/bin/sh", "-c", script}, nil, 30*time.Second, 4096)
		if err != nil {
			return fail(name, "running a command in the sandbox: "+err.Error(), "check the image has /bin/sh (deploy/sandbox/README.md)")
		}
		lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
		if len(lines) != 3 {
			return fail(name, fmt.Sprintf("unexpected answer from the sandbox (exit %d): %q", res.ExitCode, clip(string(res.Stdout)+string(res.Stderr), 200)), "check the sandbox image")
		}
		var problems []string
		if ifaces := strings.TrimSpace(lines[0]); ifaces != "lo" {
			problems = append(problems, fmt.Sprintf("network interfaces %q, want only lo", ifaces))
		}
		if uid := strings.TrimSpace(lines[1]); uid == "0" {
			problems = append(problems, "commands run as root")
		}
		if strings.TrimSpace(lines[2]) != "read-only" {
			problems = append(problems, "the root file system is writable")
		}
		if len(problems) > 0 {
			return fail(name, strings.Join(problems, "; "), "the engine does not apply frognano's confinement: do not run agents on it")
		}
		return pass(name, fmt.Sprintf("ready in %s: only lo, uid %s, read-only root", ready.Round(10*time.Millisecond), strings.TrimSpace(lines[1])))
	})
}
