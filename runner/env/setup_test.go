package env_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/env/envtest"
	"github.com/frognano/frognano/runner/sandbox"
)

// The setup script has network and runs as root with few capabilities; what it installs
// outside the working tree is in every later sandbox, which has no network, only lo, a
// read-only root filesystem and a fresh copy of the checkout; nothing of the operator's
// setup environment stays in the image; the second run reuses the image without setup.
func TestSetupWithNetworkThenSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := envtest.NewServer(t, docker, "pkgs", map[string][]byte{"hello.txt": []byte("hello from the package server\n")})
	fetch := `python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('` + srv.URL() + `/hello.txt', timeout=5).read().decode())"`
	script := `set -eu
echo "setup interfaces: $(ls /sys/class/net | sort | tr '\n' ' ')"
echo "setup uid: $(id -u)"
grep CapEff /proc/self/status
` + fetch + ` > /opt/fetched.txt
echo "fetched: $(cat /opt/fetched.txt)"
echo "index: $PIP_INDEX_URL"
env | cut -d= -f1 | sort > /opt/setup-env-names
echo "GREETING_FILE=/opt/fetched.txt" >> "$FROGNANO_ENV"
mkdir -p build && echo built > build/out.txt && echo "setup was here" >> README.md && echo new > untracked.txt
`
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: script, "README.md": "readme\n", "requirements.txt": "six\n"})
	// The working tree's script is not the commit's: it never runs.
	if err := os.WriteFile(filepath.Join(dir, env.ScriptFile), []byte("echo WORKTREE SCRIPT; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const password = "s3cretpass"
	m := manager(t, env.Config{Network: srv.Network, Env: []string{"PIP_INDEX_URL=http://user:" + password + "@pkgs:8080/simple/"}}, "")
	cfg := sandboxConfig(t)
	var mu sync.Mutex
	var progress []string
	req := env.Request{RunID: "envtest-net", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Repo: "acme/widget", Sandbox: cfg, Progress: func(l string) {
		mu.Lock()
		progress = append(progress, l)
		mu.Unlock()
	}}
	e, err := m.Prepare(ctx, req)
	if err != nil {
		var se *env.SetupError
		if errors.As(err, &se) {
			t.Fatalf("%v\n%s", err, se.Env.Setup.Log)
		}
		t.Fatal(err)
	}
	removeEnvImage(t, e.Ref)
	defer e.Release()
	if e.Cached || e.Setup == nil || e.Ref != env.Ref(e.Key) || e.Image == sandbox.DefaultImage {
		t.Fatalf("environment %+v: want one built by this setup", e)
	}
	log := string(e.Setup.Log)
	for _, want := range []string{"setup interfaces: eth0 lo", "setup uid: 0", "fetched: hello from the package server", "index: " + env.Redacted} {
		if !strings.Contains(log, want) {
			t.Errorf("setup log lacks %q:\n%s", want, log)
		}
	}
	mu.Lock()
	all := strings.Join(progress, "\n")
	mu.Unlock()
	if strings.Contains(log+all, password) || strings.Contains(log, "WORKTREE SCRIPT") {
		t.Errorf("the log shows the operator's password or the working tree's script:\n%s", log)
	}
	if !strings.Contains(all, "fetched: hello") {
		t.Errorf("progress did not carry setup's output: %q", all)
	}
	// Root, but only the capabilities a package manager needs.
	if i := strings.Index(log, "CapEff:"); i < 0 {
		t.Error("no CapEff line")
	} else {
		capEff, err := strconv.ParseUint(strings.Fields(log[i+len("CapEff:"):])[0], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		for name, bit := range map[string]uint{"NET_RAW": 13, "NET_ADMIN": 12, "SYS_ADMIN": 21, "SYS_PTRACE": 19, "MKNOD": 27, "SYS_MODULE": 16, "DAC_READ_SEARCH": 2} {
			if capEff&(1<<bit) != 0 {
				t.Errorf("setup has CAP_%s (CapEff %x)", name, capEff)
			}
		}
		if capEff&1 == 0 {
			t.Errorf("setup lacks CAP_CHOWN, which package managers need (CapEff %x)", capEff)
		}
	}

	// The image keeps what setup exported, and nothing of the operator's setup environment.
	info, err := docker.ImageInspect(ctx, e.Image)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.Config.Env, "GREETING_FILE=/opt/fetched.txt") {
		t.Errorf("image env %q lacks what setup exported", info.Config.Env)
	}
	for _, kv := range info.Config.Env {
		if strings.Contains(kv, password) || strings.HasPrefix(kv, "PIP_INDEX_URL=") || strings.HasPrefix(kv, "FROGNANO_") {
			t.Errorf("image env holds %q", kv)
		}
	}
	if info.Config.Labels[env.LabelKey] != e.Key || info.Config.Labels[env.LabelRepo] != "acme/widget" || len(info.Config.Volumes) != 0 {
		t.Errorf("image labels %v, volumes %v", info.Config.Labels, info.Config.Volumes)
	}

	// The agent's phase: locked down, offline, a fresh checkout, setup's files outside it.
	out, code := run(t, cfg, e.Image, sandbox.DefaultImage, dir, `echo "agent interfaces: $(ls /sys/class/net | tr '\n' ' ')"
echo "greeting: $(cat "$GREETING_FILE")"
test -e build/out.txt && echo "BUILD OUTPUT PRESENT" || echo "no build output"
test -e untracked.txt && echo "UNTRACKED PRESENT" || echo "no untracked file"
echo "readme: $(cat README.md)"
`+fetch+` 2>/dev/null && echo "FETCHED" || echo "fetch failed"
echo "uid $(id -u)"
touch /opt/x 2>/dev/null && echo "ROOT FS WRITABLE" || echo "root fs read-only"
sed 's/^/setup env name: /' /opt/setup-env-names`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"agent interfaces: lo \n", "greeting: hello from the package server", "no build output", "no untracked file", "readme: readme\n", "fetch failed", "uid 1000", "root fs read-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("agent phase output lacks %q:\n%s", want, out)
		}
	}
	// Setup's environment: the image's, Docker's and bash's own names, frognano's, the
	// operator's. Nothing of this test process's environment.
	allowed := []string{"PATH", "PYTHONDONTWRITEBYTECODE", "LANG", "HOME", "HOSTNAME", "PWD", "SHLVL", "_", "OLDPWD",
		"DEBIAN_FRONTEND", "PIP_INDEX_URL", "FROGNANO_SETUP", "FROGNANO_ENV", "FROGNANO_BASE_COMMIT", "FROGNANO_EXEC_ID"}
	names := 0
	for _, line := range strings.Split(out, "\n") {
		if n, ok := strings.CutPrefix(line, "setup env name: "); ok {
			names++
			if !slices.Contains(allowed, n) {
				t.Errorf("setup's environment holds %s", n)
			}
		}
	}
	if names < 5 {
		t.Errorf("only %d names of setup's environment were seen:\n%s", names, out)
	}

	// The second run with the same key: no setup, the same image.
	start := time.Now()
	again, err := m.Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	t.Logf("cached environment ready in %s", time.Since(start))
	if !again.Cached || again.Setup != nil || again.Image != e.Image {
		t.Errorf("second run: %+v, want the cached image %s", again, e.Image)
	}
}

// A failing setup is a SetupError with its exit status and log; nothing is committed and no
// container is left. A setup out of time, one that exports a reserved name, and one that writes
// past its disk limits (outside the workspace: FROGNANO_SETUP_DISK, measured while it runs and
// again before the commit; in the workspace: the sandbox's) fail too.
func TestSetupFailures(t *testing.T) {
	t.Parallel()
	// The writers wait once done, so that a measurement a loaded machine delays still finds
	// them running; a setup the limit never stopped would end by its time limit instead.
	const layerReason, workspaceReason = "past the setup's disk limit of 64.0 MiB (FROGNANO_SETUP_DISK): setup was killed", "past the sandbox's disk limit of 32.0 MiB"
	for _, tt := range []struct {
		name, script string
		timeout      time.Duration
		layer, ws    int64 // setup's disk limits: outside the workspace, and in it
		check        func(t *testing.T, se *env.SetupError)
	}{
		{"DiskOutsideWorkspace", "head -c 268435456 /dev/zero > /opt/fill && echo WROTE-ALL && sleep 600\n", 5 * time.Minute, 64 << 20, 0, func(t *testing.T, se *env.SetupError) {
			if !strings.Contains(se.Reason, layerReason) || se.Env.Setup.TimedOut {
				t.Errorf("setup %+v, reason %q, log:\n%s", se.Env.Setup, se.Reason, se.Env.Setup.Log)
			}
		}},
		{"DiskOutsideWorkspaceAtCommit", "head -c 268435456 /dev/zero > /opt/fill\n", 0, 64 << 20, 0, func(t *testing.T, se *env.SetupError) {
			// Caught while it wrote or, once it exited 0, before the commit: never committed.
			if !strings.Contains(se.Reason, layerReason) {
				t.Errorf("setup %+v, reason %q, log:\n%s", se.Env.Setup, se.Reason, se.Env.Setup.Log)
			}
		}},
		{"DiskInWorkspace", "head -c 268435456 /dev/zero > build.out && echo WROTE-ALL && sleep 600\n", 5 * time.Minute, 0, 32 << 20, func(t *testing.T, se *env.SetupError) {
			if !strings.Contains(se.Reason, workspaceReason) || se.Env.Setup.TimedOut {
				t.Errorf("setup %+v, reason %q, log:\n%s", se.Env.Setup, se.Reason, se.Env.Setup.Log)
			}
		}},
		{"ExitStatus", "echo step one\necho to stderr >&2\nexit 3\n", 0, 0, 0, func(t *testing.T, se *env.SetupError) {
			if s := se.Env.Setup; s.ExitCode != 3 || s.TimedOut || !strings.Contains(string(s.Log), "step one\nto stderr\n") || !strings.Contains(se.Reason, "status 3") {
				t.Errorf("setup %+v, reason %q, log:\n%s", s, se.Reason, s.Log)
			}
		}},
		{"Timeout", "echo started\nsleep 120\n", 3 * time.Second, 0, 0, func(t *testing.T, se *env.SetupError) {
			if s := se.Env.Setup; !s.TimedOut || !strings.Contains(string(s.Log), "started") || !strings.Contains(se.Reason, "ran out of time") {
				t.Errorf("setup %+v, reason %q", s, se.Reason)
			}
		}},
		{"ReservedEnv", "echo HOME=/x >> \"$FROGNANO_ENV\"\n", 0, 0, 0, func(t *testing.T, se *env.SetupError) {
			if !strings.Contains(se.Reason, "HOME is set by frognano") || !strings.Contains(string(se.Env.Setup.Log), "setup failed: ") {
				t.Errorf("reason %q, log:\n%s", se.Reason, se.Env.Setup.Log)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: tt.script})
			m := manager(t, env.Config{Network: env.NoNetwork, Timeout: tt.timeout, Disk: tt.layer}, "")
			cfg := sandboxConfig(t)
			if tt.ws != 0 {
				cfg.Disk = tt.ws
			}
			runID := "envtest-fail-" + strings.ToLower(tt.name)
			e, err := m.Prepare(ctx, env.Request{RunID: runID, RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: cfg})
			var se *env.SetupError
			if !errors.As(err, &se) {
				if e != nil {
					e.Release()
				}
				t.Fatalf("err = %v, want a SetupError", err)
			}
			tt.check(t, se)
			if _, err := docker.ImageInspect(ctx, se.Env.Ref); !cerrdefs.IsNotFound(err) {
				t.Errorf("an image %s exists after a failed setup (%v)", se.Env.Ref, err)
			}
			left, err := docker.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelRunID+"="+runID))})
			if err != nil || len(left) != 0 {
				t.Errorf("%d containers left (%v)", len(left), err)
			}
		})
	}
}

// A setup script cannot blind the disk watcher: it runs the operator's base image, never the
// environment image, so a du that setup replaced with a liar is not the one that measures. A
// sandbox made from that environment that writes past its disk limit is stopped.
func TestSetupCannotBlindTheDiskWatcher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	liar := "printf '#!/bin/sh\\necho \"0\t/workspace\"\\n' > /usr/bin/du && chmod 755 /usr/bin/du\n"
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: liar})
	e, err := manager(t, env.Config{Network: env.NoNetwork}, "").Prepare(ctx, env.Request{RunID: "envtest-liar", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	removeEnvImage(t, e.Ref)
	defer e.Release()
	cfg := sandboxConfig(t)
	cfg.Image, cfg.BaseImage, cfg.Disk = e.Image, sandbox.DefaultImage, 32<<20
	sb, err := sandbox.New(ctx, docker, cfg, "envtest-liar", "agent")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	res, err := sb.Exec(ctx, []string{"/bin/sh", "-c", "du -sxB1 /workspace"}, nil, time.Minute, 0)
	if err != nil || !strings.HasPrefix(string(res.Stdout), "0\t/workspace") {
		t.Fatalf("the environment's du is not the liar: %q, %v", res.Stdout, err)
	}
	// The writer then waits: on a fast disk 256 MiB may be written between two of the
	// watcher's measurements, and what is asserted is that the watcher (with the base image's
	// du) stops the sandbox for the disk limit at all, not how far past the limit it got.
	res, err = sb.Exec(ctx, []string{"/bin/sh", "-c", "head -c 268435456 /dev/zero > /workspace/fill; echo WROTE-ALL; sleep 110; echo NOT-STOPPED"}, nil, 2*time.Minute, 0)
	if err == nil && strings.Contains(string(res.Stdout), "NOT-STOPPED") {
		t.Fatalf("256 MiB stayed under a 32 MiB limit for 110 s: the watcher was blinded")
	}
	t.Logf("the writer wrote everything before it was stopped: %v", strings.Contains(string(res.Stdout), "WROTE-ALL"))
	if why := sb.StopReason(ctx); !strings.Contains(why, "disk limit") {
		t.Errorf("stop reason %q, want the disk limit", why)
	}
}

// Setup's capabilities are enough for Debian's package manager: with no network, setup builds a
// package (a program, and a maintainer script that adds a system user and gives it a
// directory) and installs it with apt-get; the program, the user and the directory's owner are
// in the sealed sandbox made from the environment.
func TestSetupInstallsADebianPackage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	script := `set -eu
pkg=/tmp/pkg
mkdir -p $pkg/DEBIAN $pkg/usr/local/bin
printf 'Package: frognano-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: a test package\n' > $pkg/DEBIAN/control
printf '#!/bin/sh\necho hello from a package\n' > $pkg/usr/local/bin/frognano-hello
printf '#!/bin/sh\nset -e\nuseradd --system --no-create-home frognano-svc\nmkdir -p /var/lib/frognano-hello\nchown frognano-svc /var/lib/frognano-hello\n' > $pkg/DEBIAN/postinst
chmod 755 $pkg/usr/local/bin/frognano-hello $pkg/DEBIAN/postinst
dpkg-deb --build --root-owner-group $pkg /tmp/frognano-hello.deb
apt-get install -y /tmp/frognano-hello.deb
`
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: script})
	e, err := manager(t, env.Config{Network: env.NoNetwork}, "").Prepare(ctx, env.Request{RunID: "envtest-deb", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: sandboxConfig(t)})
	if err != nil {
		var se *env.SetupError
		if errors.As(err, &se) {
			t.Fatalf("%v\n%s", err, se.Env.Setup.Log)
		}
		t.Fatal(err)
	}
	removeEnvImage(t, e.Ref)
	defer e.Release()
	out, code := run(t, sandboxConfig(t), e.Image, sandbox.DefaultImage, "", "frognano-hello; stat -c %U /var/lib/frognano-hello; id -u; dpkg-query -W -f '${Status}\\n' frognano-hello")
	if want := "hello from a package\nfrognano-svc\n1000\ninstall ok installed\n"; code != 0 || out != want {
		t.Errorf("in the sandbox (exit %d):\n%s\nwant\n%s\nsetup's log:\n%s", code, out, want, e.Setup.Log)
	}
}
