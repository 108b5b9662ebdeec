package env

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/runner/sandbox"
)

// Defaults of Config.
const (
	DefaultNetwork   = "bridge"
	DefaultTimeout   = 15 * time.Minute
	DefaultCacheSize = 20 << 30
	// DefaultFreshFor is Config.FreshFor's default.
	DefaultFreshFor = 10 * time.Minute
	DefaultDisk     = 10 << 30
	// NoNetwork is the Network value that runs setup without any network.
	NoNetwork = "none"
	// lifetimeMargin is added to the setup's time limit to make its container's lifetime.
	lifetimeMargin = 5 * time.Minute
)

// Labels of an environment image.
const (
	LabelEnv      = "dev.frognano.env"         // always "1"
	LabelKey      = "dev.frognano.env-key"     // Key
	LabelBaseID   = "dev.frognano.env-base-id" // the base image's ID
	LabelBaseName = "dev.frognano.env-base"    // the base image as the operator named it
	LabelRepo     = "dev.frognano.env-repo"    // the repository whose setup made it (informative)
	LabelScope    = "dev.frognano.env-scope"   // Scope.Repo: the only repository that may use it
	LabelTenant   = "dev.frognano.env-tenant"  // Scope.Tenant: whose share of the cache it takes
	LabelCommit   = "dev.frognano.env-commit"  // the commit its script came from
	LabelRun      = "dev.frognano.env-run"     // the run that made it
	imageRepo     = "frognano-env"             // environment images are frognano-env:KEY
	envFileVar    = "FROGNANO_ENV"             // names EnvFile in setup's environment
	baseCommitVar = "FROGNANO_BASE_COMMIT"     // the commit setup runs for
	setupVar      = "FROGNANO_SETUP"           // "1" during setup
	setupHome     = "HOME=/root"               // setup's home: root's, in the image like anything else
	aptFrontend   = "DEBIAN_FRONTEND=noninteractive"
)

// Ref is the image reference of the environment with key.
func Ref(key string) string { return imageRepo + ":" + key }

// Config is the operator's configuration of setup and the cache. The zero value of a field
// means its default.
type Config struct {
	// Disabled runs no setup: every run uses its base image (`frognano run --no-setup`).
	Disabled bool
	// Network is the Docker network the setup container joins (FROGNANO_SETUP_NETWORK);
	// default DefaultNetwork; NoNetwork runs setup without network.
	Network string
	// Timeout bounds one setup (FROGNANO_SETUP_TIMEOUT); default DefaultTimeout.
	Timeout time.Duration
	// Disk bounds what one setup writes outside its workspace, in bytes (FROGNANO_SETUP_DISK):
	// the environment image's own layer; default DefaultDisk. The workspace has the sandbox's
	// limits (sandbox.Config.Disk and Files). Past either, setup is killed and fails.
	Disk int64
	// Env is NAME=value entries for the setup script and nothing else (FROGNANO_SETUP_ENV):
	// proxy settings, a package mirror's address. Nothing of frognano's own environment
	// reaches setup otherwise. Their values are replaced by [redacted] in the setup log.
	Env []string
	// CacheSize bounds the environment images' own layers together, in bytes
	// (FROGNANO_ENV_CACHE_SIZE); default DefaultCacheSize. Past it the least recently used
	// images not in use are removed.
	CacheSize int64
	// FreshFor: an environment image younger than this is never removed by Evict or
	// RemoveUnused, whatever the bound: it may be another process's, between its commit and
	// its tag or pin (where nothing yet marks it as in use). Default DefaultFreshFor; negative:
	// none (tests of the cache itself).
	FreshFor time.Duration
	// SharedLock, when set, is taken before the local lock around building an environment:
	// the service passes a PostgreSQL advisory lock, so that workers on other hosts sharing
	// the engine build each environment once too.
	SharedLock Locker
	// LockDir holds the local lock files; default a folder in the system's temp dir.
	LockDir string
	// Observe, when set, is told for each Prepare that needed an environment image whether it
	// reused a cached one (true) or built it (false): the service's
	// frognano_environment_cache_total. It must not block.
	Observe func(reused bool)
}

func (c Config) withDefaults() Config {
	if c.Network == "" {
		c.Network = DefaultNetwork
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CacheSize <= 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.FreshFor == 0 {
		c.FreshFor = DefaultFreshFor
	}
	if c.Disk <= 0 {
		c.Disk = DefaultDisk
	}
	if c.LockDir == "" {
		c.LockDir = filepath.Join(os.TempDir(), "frognano-env-locks")
	}
	return c
}

// CheckNetwork refuses a setup network that would give setup the host's own network (the
// host's loopback services, PostgreSQL among them) or another container's.
func CheckNetwork(name string) error {
	if name == "host" || strings.HasPrefix(name, "container:") {
		return fmt.Errorf("setup network %q would share a network namespace that is not setup's own: use bridge, a network of your own, or none", name)
	}
	return nil
}

// Manager prepares environments. It is safe for concurrent use.
type Manager struct {
	docker *client.Client
	cfg    Config
	local  Locker
	log    *slog.Logger
}

// New returns a Manager on the given engine.
func New(docker *client.Client, cfg Config, log *slog.Logger) *Manager {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{docker: docker, cfg: cfg, local: FileLocker{Dir: cfg.LockDir}, log: log}
}

// Config returns the configuration in use, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

// Request is one run's need for an environment.
type Request struct {
	RunID   string
	RepoDir string // the host checkout; read, never modified
	Commit  string // the base commit: the script and the input list come from it
	Repo    string // "owner/name", recorded on the image (informative); may be empty
	// Scope is whose environment this is: only runs of the same Scope.Repo ever share it.
	// Required.
	Scope Scope
	// Sandbox is the run's sandbox configuration: its Image is the base image, and its
	// limits, owner and instance are the setup container's too.
	Sandbox sandbox.Config
	// Progress, when set, receives each line of setup's output (redacted) as it comes.
	Progress func(line string)
}

// Environment is what a run's sandboxes are made from. Release it when the run is over.
type Environment struct {
	BaseImage string // the operator's image, as named
	// Image is what the run's sandboxes are made from: the environment image's ID, or
	// BaseImage when there is no setup.
	Image string
	Ref   string // frognano-env:KEY; empty when there is no setup
	Key   string
	// Why is set when no setup applies: "disabled", "no setup script".
	Why    string
	Cached bool      // the environment existed; no setup ran
	Setup  *SetupRun // the setup this run ran; nil when none ran
	Inputs Inputs    // what setup saw of the repository besides its script

	release func() error
}

// Release lets the environment image go (the cache may remove it once no run uses it).
func (e *Environment) Release() error {
	if e == nil || e.release == nil {
		return nil
	}
	r := e.release
	e.release = nil
	return r()
}

// SetupRun is one run of the setup script.
type SetupRun struct {
	Network  string
	Duration time.Duration
	ExitCode int
	TimedOut bool
	// Log is setup's output (stdout and stderr together, with frognano's own notes), its last
	// maxLogBytes, with the operator's values redacted. It is the repository's text: untrusted.
	Log []byte
}

// SetupError is a setup script that failed (exited non-zero, ran out of time, or left a bad
// $FROGNANO_ENV), or an environment the seal check refused (Unsealed: setup may have exited 0):
// the run ends before any model call. Retrying will not help until the repository changes.
type SetupError struct {
	Env    *Environment // what was known: the base image, the key, the setup run (Env.Setup)
	Reason string       // one sentence
	// Unsealed, when set, is why the seal check refused what setup built (seal.go): a refusal
	// of the environment, not a failure of the script.
	Unsealed *Unsealed
}

func (e *SetupError) Error() string {
	if e.Unsealed != nil {
		return "environment refused: " + e.Reason
	}
	return "setup failed: " + e.Reason
}

// Prepare returns the environment for req: the base image when setup is disabled or the
// commit has no setup script; a cached environment image when one has req's key; otherwise it
// builds one, once for all the runs that need it at the same time (they wait for the first
// and reuse its image). A failed setup is a *SetupError. The environment is pinned until
// Release, which the caller must call on every path when err is nil.
func (m *Manager) Prepare(ctx context.Context, req Request) (*Environment, error) {
	base := req.Sandbox.Image
	if base == "" {
		base = sandbox.DefaultImage
	}
	env := &Environment{BaseImage: base, Image: base}
	if m.cfg.Disabled {
		env.Why = "disabled"
		return env, nil
	}
	script, err := ScriptAt(ctx, req.RepoDir, req.Commit)
	if err != nil {
		return nil, &SetupError{Env: env, Reason: err.Error()}
	}
	if script == nil {
		env.Why = "no setup script"
		return env, nil
	}
	if req.Scope.Repo == "" || req.Scope.Tenant == "" {
		return nil, errors.New("preparing an environment: the request names no scope (whose environment it is)")
	}
	if err := CheckNetwork(m.cfg.Network); err != nil {
		return nil, err
	}
	info, err := m.docker.ImageInspect(ctx, base)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, &MissingImageError{Image: base}
		}
		return nil, fmt.Errorf("inspecting the base image %s: %w", base, err)
	}
	inputs, err := ReadInputs(ctx, req.RepoDir, req.Commit)
	if err != nil {
		return nil, &SetupError{Env: env, Reason: err.Error()}
	}
	env.Inputs = inputs
	env.Key = Key(req.Scope, info.ID, script, inputs)
	env.Ref = Ref(env.Key)

	if ok, err := m.useCached(ctx, req, env); err != nil {
		return nil, err
	} else if ok {
		m.observe(true)
		return env, nil
	}
	unlock, err := both(ctx, m.cfg.SharedLock, m.local, env.Key)
	if err != nil {
		return nil, err
	}
	// Another run may have built it while this one waited.
	cached, err := m.useCached(ctx, req, env)
	if err == nil && !cached {
		err = m.build(ctx, req, env, info, script)
	}
	unlock()
	if err != nil {
		return nil, err
	}
	m.observe(cached)
	if !cached {
		// Keep the cache within its bound; the new image is pinned, so it stays.
		if _, err := m.Evict(context.WithoutCancel(ctx)); err != nil {
			m.runLog(ctx, req).Warn("keeping the environment cache within its bound", logging.Err(err))
		}
	}
	return env, nil
}

func (m *Manager) observe(reused bool) {
	if m.cfg.Observe != nil {
		m.cfg.Observe(reused)
	}
}

// MissingImageError: the operator's base image is not on the engine.
type MissingImageError struct{ Image string }

func (e *MissingImageError) Error() string {
	return fmt.Sprintf("sandbox image %s is missing: build it with `frognano sandbox build` or name an existing image", e.Image)
}

// useCached pins and uses the environment image of env.Key when the engine has it. It reports
// false, with no error, when there is none (or it was removed between the look and the pin).
func (m *Manager) useCached(ctx context.Context, req Request, env *Environment) (bool, error) {
	info, err := m.docker.ImageInspect(ctx, env.Ref)
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for environment %s: %w", env.Ref, err)
	}
	if info.Config == nil || info.Config.Labels[LabelKey] != env.Key || info.Config.Labels[LabelScope] != req.Scope.Repo {
		return false, nil // not this repository's: rebuild over it
	}
	if info.Config.Labels[LabelSealed] != sealVersion {
		return false, nil // made before the seal check (seal.go): rebuild over it
	}
	release, err := sandbox.Pin(ctx, m.docker, req.Sandbox, req.RunID, info.ID)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	m.touch(ctx, req, env.Ref)
	env.Image, env.Cached, env.release = info.ID, true, release
	return true, nil
}

// touch marks an environment as used now: the engine records the time of the last tag, and
// the cache removes the least recently tagged first.
func (m *Manager) touch(ctx context.Context, req Request, ref string) {
	if err := m.docker.ImageTag(ctx, ref, ref); err != nil {
		m.runLog(ctx, req).Warn("marking the environment as used", "image", ref, logging.Err(err))
	}
}

// runLog is the logger of req's run: the one ctx carries (the runner puts the run's there,
// naming it), else the manager's, with req's run id as sandbox_run.
func (m *Manager) runLog(ctx context.Context, req Request) *slog.Logger {
	return logging.FromContextOr(ctx, m.log.With(logging.SandboxRun(req.RunID)))
}
