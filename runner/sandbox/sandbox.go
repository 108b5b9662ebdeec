package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// Labels put on every sandbox container, so that leftovers can be found and removed (Prune) and
// an operator can tell what a container was for.
const (
	LabelSandbox = "dev.frognano.sandbox" // always "1"
	LabelRunID   = "dev.frognano.run-id"
	LabelPurpose = "dev.frognano.purpose" // "agent", "tests-before", "tests-after"
	LabelOwner   = "dev.frognano.owner"   // Config.Owner: which service instance made it
	// LabelInstance is Config.Instance: which start of that owner's process made it, so that
	// a sandbox a dead predecessor's request created late can be told from this process's own.
	LabelInstance = "dev.frognano.instance"
	// LabelWatches marks a sandbox's disk watcher (see disk.go) and holds the ID of the sandbox
	// container it measures; the watcher carries the sandbox's other labels too.
	LabelWatches = "dev.frognano.watches"
)

// Defaults of Config.
const (
	DefaultImage     = "frognano-sandbox:latest"
	DefaultUser      = "1000:1000"
	DefaultWorkdir   = "/workspace"
	DefaultMemory    = 4 << 30
	DefaultCPUs      = 2
	DefaultPidsLimit = 512
	DefaultTmpfsSize = 1 << 30
	DefaultDisk      = 4 << 30
	DefaultFiles     = 1_000_000
	// DefaultLifetime bounds how long a sandbox lives when its creator gives no lifetime: past
	// it the container ends by itself, even if the process that made it was killed.
	DefaultLifetime = 2 * time.Hour
	// maxShmSize is the most /dev/shm may hold (Docker's own default); a smaller memory limit
	// gets an eighth of it. The tmpfs is charged to the sandbox's memory like /tmp.
	maxShmSize = 64 << 20

	// executorDir holds the executor binary: outside the workspace so that the agent's
	// `git add -A` never sees it, and an anonymous volume because the root filesystem is read-only.
	executorDir  = "/opt/frognano"
	executorPath = executorDir + "/frognano-executor"

	// closeTimeout bounds Close, which runs with its own context because it must work after
	// the caller's context is cancelled.
	closeTimeout = 30 * time.Second
	// createTimeout bounds the container create request, which runs detached from the caller's
	// context (see New).
	createTimeout = time.Minute
)

// Config describes the container New makes. The zero value of a field means its default.
type Config struct {
	Image string // default DefaultImage
	// BaseImage is the operator's image that Image derives from when Image is an environment
	// image (runner/env); default Image. The disk watcher runs BaseImage, never an image a
	// repository's setup script wrote, because the watcher runs as root and its answer
	// enforces the disk limit.
	BaseImage string
	// repo, set by NewFrom, is copied into the workspace while the disk watcher starts.
	repo         *Snapshot
	ExecutorPath string  // host path of the static frognano-executor binary; needed by StartExecutor
	User         string  // "UID:GID", numeric; default DefaultUser
	Workdir      string  // absolute; default DefaultWorkdir
	Memory       int64   // bytes, also the memory+swap limit (no swap); default DefaultMemory
	CPUs         float64 // default DefaultCPUs
	PidsLimit    int64   // default DefaultPidsLimit
	// TmpfsSize is the size of the /tmp tmpfs in bytes; default DefaultTmpfsSize, and never
	// more than half of Memory (see maxTmpfs).
	TmpfsSize int64
	// Disk is the most the workspace may hold, in bytes (the repository copy included); default
	// DefaultDisk. A watcher measures it about four times a second: past it every process of
	// the sandbox is killed and StopReason says why (see disk.go for the precision).
	Disk int64
	// Files is the most files, folders and links the workspace may hold (inodes, hard links
	// once); default DefaultFiles. Measured with Disk: empty files cost the engine's
	// filesystem inodes and almost no bytes.
	Files int64
	// Lifetime is how long the container may live (default DefaultLifetime): its main process
	// is `sleep Lifetime`, so a sandbox whose creator was killed ends by itself. It must cover
	// everything done in one sandbox (the agent loop, or one test run, plus copying).
	Lifetime time.Duration
	// Env is added to the container's environment. The host's environment is never passed;
	// proxy variables are dropped; PYTHONDONTWRITEBYTECODE=1 and HOME=/tmp are always set.
	Env    []string
	Labels map[string]string // extra labels; the dev.frognano.* labels cannot be overridden
	Owner  string            // value of LabelOwner, e.g. the host name; Prune can filter on it
	// Instance is the value of LabelInstance (empty: no such label); PruneOthers keeps only
	// the owner's sandboxes of this instance.
	Instance string
	// Ready, when set, is told how long each sandbox took from the create request until it ran
	// with its disk watcher, and for NewFrom held the checkout (the service's
	// frognano_sandbox_ready_seconds). It must not block.
	Ready func(time.Duration)
	// Slots, when set, bounds the sandboxes that exist at once across every Config sharing
	// it (FROGNANO_MAX_SANDBOXES, slots.go): New and NewSetup wait for a free slot first.
	Slots *Slots
	// OnSlotWait, when set, is told when a sandbox starts waiting for a free slot (every slot
	// in use) and, with a SlotWait of the same Purpose and Cap 0, when the wait ends. Several
	// sandboxes of one Config may wait at once. It is called from the goroutine
	// that creates the sandbox and must not block for long.
	OnSlotWait func(SlotWait)
	// Usage, when set, is given each sandbox's CPU time and peak memory as Close removes it
	// (usage.go): one per run, shared by its sandboxes.
	Usage *Usage
}

// initUser runs the container's own processes: nobody, distinct from the sandbox user.
const initUser = "65534:65534"

// DefaultConfig returns the defaults, with Owner set to the host name. Lifetime is left zero
// (DefaultLifetime) for the caller to derive from its own time limits.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		Image:     DefaultImage,
		User:      DefaultUser,
		Workdir:   DefaultWorkdir,
		Memory:    DefaultMemory,
		CPUs:      DefaultCPUs,
		PidsLimit: DefaultPidsLimit,
		TmpfsSize: DefaultTmpfsSize,
		Disk:      DefaultDisk,
		Files:     DefaultFiles,
		Owner:     host,
	}
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Image == "" {
		c.Image = d.Image
	}
	if c.BaseImage == "" {
		c.BaseImage = c.Image
	}
	if c.User == "" {
		c.User = d.User
	}
	if c.Workdir == "" {
		c.Workdir = d.Workdir
	}
	if c.Memory == 0 {
		c.Memory = d.Memory
	}
	if c.CPUs == 0 {
		c.CPUs = d.CPUs
	}
	if c.PidsLimit == 0 {
		c.PidsLimit = d.PidsLimit
	}
	if c.TmpfsSize == 0 {
		c.TmpfsSize = d.TmpfsSize
	}
	c.TmpfsSize = min(c.TmpfsSize, maxTmpfs(c.Memory))
	if c.Disk == 0 {
		c.Disk = d.Disk
	}
	if c.Files == 0 {
		c.Files = DefaultFiles
	}
	if c.Lifetime == 0 {
		c.Lifetime = DefaultLifetime
	}
	if _, _, err := parseUser(c.User); err != nil {
		return c, err
	}
	if !strings.HasPrefix(c.Workdir, "/") || c.Workdir == "/" || strings.HasPrefix(c.Workdir, executorDir) {
		return c, fmt.Errorf("sandbox workdir %q must be an absolute directory other than / and %s", c.Workdir, executorDir)
	}
	if c.Memory < 6<<20 || c.PidsLimit < 1 || c.CPUs < 0 || c.TmpfsSize < 0 || c.Disk < 1<<20 || c.Files < 1 || c.Lifetime < time.Second {
		return c, fmt.Errorf("sandbox limits out of range (memory %d, pids %d, cpus %g, tmpfs %d, disk %d, lifetime %s)",
			c.Memory, c.PidsLimit, c.CPUs, c.TmpfsSize, c.Disk, c.Lifetime)
	}
	return c, nil
}

// parseUser reads "UID:GID". Names are refused: ownership is set in tar headers, which need numbers.
func parseUser(u string) (uid, gid int, err error) {
	a, b, ok := strings.Cut(u, ":")
	uid, err1 := strconv.Atoi(a)
	gid, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("sandbox user %q must be numeric UID:GID", u)
	}
	if uid == 0 {
		return 0, 0, errors.New("sandbox user must not be root")
	}
	return uid, gid, nil
}

// env builds the container's environment from nothing but cfg.
func (c Config) env() []string {
	out := make([]string, 0, len(c.Env)+2)
	for _, kv := range c.Env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(name), "_proxy") || name == "HOME" || name == "PYTHONDONTWRITEBYTECODE" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp")
}

// Sandbox is one running container. Its methods are safe for concurrent use; tool calls are
// carried one at a time.
type Sandbox struct {
	docker   *client.Client
	cfg      Config
	id       string
	name     string
	uid      int
	gid      int
	exe      atomic.Pointer[executorConn] // set once by StartExecutor
	callMu   sync.Mutex                   // serialises StartExecutor and Call
	copied   bool                         // the executor binary is in the container; guarded by callMu
	obs      atomic.Pointer[observerConn] // set once by StartNetworkObserver
	watch    *diskWatcher                 // set by New before the sandbox is handed out
	closeMu  sync.Mutex
	closed   bool
	closeErr error
	slots    *Slots // given back by Close

	stopMu     sync.Mutex
	stopReason string        // why a limit stopped the sandbox (first one wins)
	stopped    chan struct{} // closed once the sandbox stopped for stopReason

	// setupLayer bounds a setup container's own layer (NewSetup; setupdisk.go).
	setupLayer int64
	// layerMeasured: Seal measured the layer with setup's processes gone, and only frognano's
	// executor ran in the container since, so Commit need not measure it again.
	layerMeasured bool
}

func (s *Sandbox) isClosed() bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	return s.closed
}

// ID is the container's ID.
func (s *Sandbox) ID() string { return s.id }

var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// New creates and starts a locked-down container for one run. Any failure removes what was
// created. The caller must Close the Sandbox on every path.
func New(ctx context.Context, docker *client.Client, cfg Config, runID, purpose string) (*Sandbox, error) {
	return create(ctx, docker, cfg, runID, purpose, nil)
}

// sandboxName is a readable, unique container name for a run's purpose.
func sandboxName(runID, purpose string) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "frognano-" + strings.Trim(nameUnsafe.ReplaceAllString(runID+"-"+purpose, "-"), "-.")
	if len(name) > 100 {
		name = name[:100]
	}
	return name + "-" + hex.EncodeToString(rnd[:])
}

// labelsFor is the dev.frognano.* labels of a container of cfg's owner for runID's purpose,
// over cfg.Labels (which cannot override them).
func labelsFor(cfg Config, runID, purpose string) map[string]string {
	labels := make(map[string]string, len(cfg.Labels)+5)
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	labels[LabelSandbox] = "1"
	labels[LabelRunID] = runID
	labels[LabelPurpose] = purpose
	labels[LabelOwner] = cfg.Owner
	if cfg.Instance != "" {
		labels[LabelInstance] = cfg.Instance
	}
	return labels
}

// create makes and starts the container: the locked-down sandbox, or with setup the setup
// container (setup.go), which differs only where setup.go says.
func create(ctx context.Context, docker *client.Client, cfg Config, runID, purpose string, setup *setupOptions) (*Sandbox, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("checking sandbox config: %w", err)
	}
	if err := cfg.Slots.acquire(ctx, purpose, cfg.OnSlotWait); err != nil {
		return nil, fmt.Errorf("creating sandbox container: %w", err)
	}
	start := time.Now() // Ready measures the engine's work, not the wait for a slot
	uid, gid, _ := parseUser(cfg.User)
	labels := labelsFor(cfg, runID, purpose)
	name := sandboxName(runID, purpose)

	pids := cfg.PidsLimit
	useInit := true
	ccfg := &container.Config{
		Image: cfg.Image,
		// The container's own processes (docker-init and the main sleep) run as a user the
		// model is not: the sandbox user can neither ptrace, signal nor take them over, and
		// an executor sweep of the sandbox user's processes never has to spare them.
		User:            initUser,
		WorkingDir:      cfg.Workdir,
		Env:             cfg.env(),
		Cmd:             []string{"sleep", strconv.FormatInt(int64(cfg.Lifetime.Round(time.Second)/time.Second), 10)},
		Labels:          labels,
		NetworkDisabled: true,
		Volumes:         map[string]struct{}{cfg.Workdir: {}, executorDir: {}},
		StopSignal:      "SIGKILL",
	}
	hcfg := &container.HostConfig{
		NetworkMode:    network.NetworkNone,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		Init:           &useInit,
		Tmpfs: map[string]string{
			"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,nr_inodes=%d,mode=1777", cfg.TmpfsSize, tmpfsInodes(cfg.TmpfsSize)),
			// /dev/shm stays (Python's multiprocessing needs it) but small, private and
			// noexec. It is a tmpfs of our own rather than Docker's (ShmSize), which takes no
			// inode limit; Docker then makes no /dev/shm of its own.
			"/dev/shm": fmt.Sprintf("rw,noexec,nosuid,nodev,size=%d,nr_inodes=%d,mode=1777", shmSize(cfg.Memory), tmpfsInodes(shmSize(cfg.Memory))),
		},
		IpcMode: container.IPCModePrivate,
		// Nothing is logged: PID 1's stdout is writable by the sandbox user (/proc/1/fd/1), and
		// a log file on the host would be disk the workspace limit does not see.
		LogConfig: container.LogConfig{Type: "none"},
		Resources: container.Resources{
			Memory:     cfg.Memory,
			MemorySwap: cfg.Memory,
			NanoCPUs:   int64(cfg.CPUs * 1e9),
			PidsLimit:  &pids,
		},
		AutoRemove: false,
	}
	if setup != nil {
		setup.apply(cfg, ccfg, hcfg)
	}
	// The create request is not tied to ctx: abandoned mid-flight, the engine may still create
	// the container, and the caller, with no ID, could never remove it. Cancellation is checked
	// right after instead, with the container's ID in hand.
	if err := ctx.Err(); err != nil {
		cfg.Slots.release()
		return nil, fmt.Errorf("creating sandbox container: %w", err)
	}
	createCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	created, err := docker.ContainerCreate(createCtx, ccfg, hcfg, nil, nil, name)
	cancel()
	if err != nil {
		cfg.Slots.release()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("creating sandbox container: image %q is missing (build it with deploy/sandbox/build-offline.sh): %w", cfg.Image, err)
		}
		return nil, fmt.Errorf("creating sandbox container: %w", err)
	}
	s := &Sandbox{docker: docker, cfg: cfg, id: created.ID, name: name, uid: uid, gid: gid, stopped: make(chan struct{}), slots: cfg.Slots}
	if err := ctx.Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("creating sandbox container: %w", err), s.Close())
	}
	if setup != nil {
		// The setup container's own program is the executor (setup.go): it must be there
		// before the container starts.
		s.callMu.Lock()
		err := s.copyExecutor(ctx)
		s.callMu.Unlock()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("starting the setup container: %w", err), s.Close())
		}
	}
	if err := docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return nil, errors.Join(fmt.Errorf("starting sandbox container: %w", err), s.Close())
	}
	if setup != nil {
		if err := s.watchSetup(ctx, setup.layer); err != nil {
			return nil, errors.Join(err, s.Close())
		}
		return s, nil
	}
	if err := s.watchAndFill(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if cfg.Ready != nil {
		cfg.Ready(time.Since(start))
	}
	return s, nil
}

// maxTmpfs is the largest /tmp for a memory limit: half of it. What /tmp holds is charged to the
// sandbox's memory and, without swap, can never be reclaimed, nor freed by the OOM killer: a
// /tmp as large as the memory, once full (a test suite's temporary files will do), leaves no
// room for any process, so every Bash command, the `rm` that would empty /tmp included, is
// OOM-killed as it starts, for the rest of the run. Half leaves the executor and the model's
// commands the other half, less /dev/shm's eighth at most.
func maxTmpfs(memory int64) int64 {
	return memory / 2
}

// tmpfsInodes is how many files, folders and links a tmpfs of size bytes may hold: one per 4
// KiB. The size bounds only the files' contents; each inode also takes about 1 KiB of kernel
// memory, charged to the sandbox and never reclaimed while the file exists, and the kernel's
// default allows millions. A sandbox filled with empty files (a shell loop in /dev/shm will do)
// had no memory left to start a command, the one that would delete them included. At one per 4 KiB
// the inodes of a full /tmp take about a quarter of its size on top of it.
func tmpfsInodes(size int64) int64 {
	return max(1024, size/4096)
}

// shmSize is the size of /dev/shm for a memory limit: Docker's 64 MiB, or an eighth of a
// smaller limit.
func shmSize(memory int64) int64 {
	return min(maxShmSize, memory/8)
}

// Close removes the container and its volumes. It uses its own timeout so that it works after
// the caller's context is cancelled; it is idempotent and returns the first call's result.
func (s *Sandbox) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	// Each step has its own time limit, so that a slow one (the last measurement, a watcher
	// the engine is slow to remove) leaves the next its whole time.
	s.measure(context.Background())
	var errs []error
	// The watcher goes first: a volume still mounted by it would survive the sandbox's removal.
	if s.watch != nil {
		errs = append(errs, s.closeWatcher(s.watch))
	}
	if err := removeContainer(s.docker, s.id, true); err != nil {
		errs = append(errs, fmt.Errorf("removing sandbox container %s: %w", s.name, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if s.watch != nil && s.watch.volume != "" {
		// Normally gone with the container; this catches the case where the watcher held it.
		if err := s.docker.VolumeRemove(ctx, s.watch.volume, true); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("removing the workspace volume of %s: %w", s.name, err))
		}
	}
	s.closeErr = errors.Join(errs...)
	// The slot is given back even when removing failed: the reapers remove what is left, and
	// a slot kept for it would be lost for good.
	s.slots.release()
	// The container is gone, so the executor's stream ends; close our side too.
	if exe := s.exe.Load(); exe != nil {
		exe.close()
	}
	s.closeObserver()
	return s.closeErr
}

// Prune removes every sandbox container left behind (all with LabelSandbox, or only those whose
// LabelOwner is owner when owner is not empty), with their volumes. It returns how many it removed.
func Prune(ctx context.Context, docker *client.Client, owner string) (int, error) {
	args := filters.NewArgs(filters.Arg("label", LabelSandbox))
	if owner != "" {
		args.Add("label", LabelOwner+"="+owner)
	}
	return prune(ctx, docker, args, func(container.Summary) bool { return true })
}

// PruneOthers removes the sandboxes of owner that another instance made: those a crashed
// predecessor left, including any whose creation the engine finished after that process died
// (and after a Prune at start). This instance's own sandboxes are left alone. A service calls
// it now and then while it runs.
func PruneOthers(ctx context.Context, docker *client.Client, owner, instance string) (int, error) {
	if owner == "" || instance == "" {
		return 0, errors.New("PruneOthers needs an owner and an instance")
	}
	return PruneIf(ctx, docker, owner, func(other string) bool { return other != instance })
}

// PruneIf removes the sandboxes of owner (not empty) whose LabelInstance value (empty when the
// label is missing) remove accepts, with their disk watchers and volumes. `frognano run` uses it
// to remove what earlier runs that were killed left, while runs still alive keep theirs.
func PruneIf(ctx context.Context, docker *client.Client, owner string, remove func(instance string) bool) (int, error) {
	if owner == "" {
		return 0, errors.New("PruneIf needs an owner")
	}
	args := filters.NewArgs(filters.Arg("label", LabelSandbox), filters.Arg("label", LabelOwner+"="+owner))
	return prune(ctx, docker, args, func(c container.Summary) bool { return remove(c.Labels[LabelInstance]) })
}

// prune removes the listed containers that remove accepts and returns how many sandboxes
// (disk watchers are not counted) it removed.
func prune(ctx context.Context, docker *client.Client, args filters.Args, remove func(container.Summary) bool) (int, error) {
	list, err := docker.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return 0, fmt.Errorf("listing sandbox containers: %w", err)
	}
	removed := 0
	var errs []error
	// Disk watchers first: a workspace volume a watcher still mounts would outlive its sandbox.
	for _, watchers := range []bool{true, false} {
		for _, c := range list {
			if (c.Labels[LabelWatches] != "") != watchers || !remove(c) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return removed, errors.Join(append(errs, err)...)
			}
			// Removed by its own Close meanwhile counts too: it is gone.
			if err := removeContainer(docker, c.ID, true); err != nil {
				errs = append(errs, fmt.Errorf("removing sandbox container %s: %w", c.ID, err))
			} else if !watchers {
				removed++
			}
		}
	}
	return removed, errors.Join(errs...)
}

// NewClient connects to the Docker engine named by the environment (DOCKER_HOST etc.),
// negotiating the API version (Docker 20.10 speaks 1.41), and checks that it answers.
func NewClient() (*client.Client, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("configuring the Docker client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("no Docker engine answers at %s: start it (systemctl start docker) or set DOCKER_HOST: %w", c.DaemonHost(), err)
	}
	return c, nil
}
