package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// The setup container: where a repository's .frognano/setup.sh runs (runner/env), once per
// environment, before any model acts. It is a sandbox with three differences, each needed to
// install what a project's tests need, and each paid for by what comes after:
//
//   - network: the operator's Docker network (SetupNetwork), so that package managers reach
//     their servers;
//   - a writable root filesystem, because what setup installs there becomes the environment
//     image (Commit); the workspace and /tmp are not part of it;
//   - root, for package managers, with only SetupCapabilities and no-new-privileges.
//
// Everything else is the sandbox's: no credential (the environment comes from nothing but the
// caller), memory, CPU and pids limits, the workspace's disk watcher (and a bound on what it
// writes outside the workspace, setupdisk.go), Docker's seccomp profile, no log on the host, an
// end at its lifetime. Every later sandbox made from the environment image is as locked down as any
// other: network none, read-only root filesystem, no capability, non-root, no-new-privileges,
// so that whatever setup installed (a setuid binary, file capabilities) gives the model nothing.
const (
	// SetupUser runs the setup script.
	SetupUser = "0:0"
	// PurposeSetup is the LabelPurpose of a setup container.
	PurposeSetup = "setup"
)

// SetupCapabilities are the capabilities a setup container keeps: what apt, dpkg and pip need
// (change owners and modes of what they install, switch to apt's unprivileged user and end its
// helpers, set file capabilities, which no later sandbox honours). Left out of Docker's default
// set: NET_RAW (raw sockets), MKNOD (device nodes), SYS_CHROOT, SETPCAP, AUDIT_WRITE,
// NET_BIND_SERVICE.
var SetupCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "SETFCAP", "KILL"}

// setupOptions is what makes create build a setup container.
type setupOptions struct {
	network string
	layer   int64 // the most its root filesystem's own layer may hold; 0: no bound
}

// apply turns the sandbox's container configuration into the setup container's.
func (o *setupOptions) apply(cfg Config, ccfg *container.Config, hcfg *container.HostConfig) {
	// Nothing in the container's own configuration but the image's: Commit keeps the
	// container's environment in the image, so the setup command's environment (which may
	// hold the operator's proxy settings) goes to its exec alone (ExecSpec.Env).
	ccfg.Env = nil
	// The workspace is an anonymous volume given as a mount, not declared in the container's
	// configuration, so that the environment image does not declare it either: what setup
	// wrote in the working tree is never part of the image, and every run starts from a
	// fresh copy of its checkout. The executor's directory is one too, as in every sandbox
	// (the same mounts, so that what one hides from the seal check it hides from every
	// sandbox made from the image).
	ccfg.Volumes = nil
	hcfg.Mounts = []mount.Mount{{Type: mount.TypeVolume, Target: cfg.Workdir}, {Type: mount.TypeVolume, Target: executorDir}}
	// The container's own program is frognano's executor, idle, not the image's sleep: the
	// seal check (seal.go) starts the container again after setup, and nothing of what setup
	// left in the image may run then, root as it is. The binary is copied in before each
	// start (create, Seal), over whatever setup put in its place.
	ccfg.Cmd = []string{executorPath, "-idle", strconv.FormatInt(int64(cfg.Lifetime.Round(time.Second)/time.Second), 10) + "s"}
	hcfg.ReadonlyRootfs = false
	hcfg.CapAdd = append([]string(nil), SetupCapabilities...)
	// The container's own user is root too: Docker gives effective capabilities only to a
	// container whose user is root, and an exec inherits its container's (no-new-privileges
	// keeps execve from adding any). There is no model in a setup container to protect its
	// init from.
	ccfg.User = SetupUser
	if o.network != "" && o.network != network.NetworkNone {
		ccfg.NetworkDisabled = false
		hcfg.NetworkMode = container.NetworkMode(o.network)
	}
}

// NewSetup creates and starts a setup container from cfg.Image on the Docker network
// networkName ("none": no network). Its workspace is bounded like a sandbox's (cfg.Disk and
// cfg.Files), and what it writes outside the workspace by layer bytes (0: no bound; see
// setupdisk.go): past either, setup is killed and StopReason says why. Like New, any failure
// removes what was created and the caller must Close it on every path. cfg.Lifetime must cover
// the setup's time limit.
func NewSetup(ctx context.Context, docker *client.Client, cfg Config, networkName string, layer int64, runID string) (*Sandbox, error) {
	if networkName == "" {
		return nil, errors.New("creating the setup container: no network named (use \"none\" for none)")
	}
	return create(ctx, docker, cfg, runID, PurposeSetup, &setupOptions{network: networkName, layer: layer})
}

// Commit ends every process in the container (it is stopped with SIGKILL, so that the files
// are still while they are read) and commits its filesystem as the image ref, with the image
// configuration cfg (labels, environment, command: nothing of the container's is kept except
// what Docker merges in from its configuration, which NewSetup keeps free of secrets). The
// workspace volume and the /tmp tmpfs are not part of the image. It returns the image's ID.
// A layer past NewSetup's bound, measured once the container stopped (by Seal, when it ran:
// nothing that writes ran since), is a *LimitError and is not committed.
func (s *Sandbox) Commit(ctx context.Context, ref string, cfg *container.Config) (string, error) {
	zero := 0
	if err := s.docker.ContainerStop(ctx, s.id, container.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		return "", fmt.Errorf("stopping the setup container before committing it: %w", err)
	}
	if s.setupLayer > 0 && !s.layerMeasured {
		why, err := s.layerOver(ctx)
		if err != nil {
			return "", err
		}
		if why != "" {
			return "", &LimitError{Reason: why}
		}
	}
	res, err := s.docker.ContainerCommit(ctx, s.id, container.CommitOptions{
		Reference: ref,
		Comment:   "frognano environment",
		Config:    cfg,
		Pause:     false, // already stopped
	})
	if err != nil {
		return "", fmt.Errorf("committing the setup container as %s: %w", ref, err)
	}
	return res.ID, nil
}

// Pin creates, without starting it, a container of image that holds nothing and runs nothing,
// labelled like cfg's sandboxes (purpose "pin"), so that the engine refuses to remove the image
// while the run that pinned it needs it (runner/env removes environment images only when the
// engine lets it). Prune and the reapers remove a pin like any sandbox. The returned function
// removes it.
func Pin(ctx context.Context, docker *client.Client, cfg Config, runID, image string) (func() error, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("checking sandbox config: %w", err)
	}
	ccfg := &container.Config{
		Image:           image,
		User:            initUser,
		Cmd:             []string{"true"},
		Entrypoint:      []string{},
		Labels:          labelsFor(cfg, runID, "pin"),
		NetworkDisabled: true,
	}
	hcfg := &container.HostConfig{NetworkMode: network.NetworkNone, CapDrop: []string{"ALL"}, LogConfig: container.LogConfig{Type: "none"}}
	createCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	created, err := docker.ContainerCreate(createCtx, ccfg, hcfg, nil, nil, sandboxName(runID, "pin"))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("pinning image %s: %w", image, err)
	}
	return func() error {
		if err := removeContainer(docker, created.ID, true); err != nil {
			return fmt.Errorf("removing the pin of %s: %w", image, err)
		}
		return nil
	}, nil
}

// PutFile writes data as the file rel of the workspace (slash-separated; its parent
// directories are created, and replace whatever non-directory held their path), owned by the
// sandbox user with mode.
func (s *Sandbox) PutFile(ctx context.Context, rel string, data []byte, mode int64) error {
	if !safeTrackedPath(rel) {
		return fmt.Errorf("writing %q into the sandbox: not a plain relative path", rel)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/") + "/"
		if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755, Uid: s.uid, Gid: s.gid, Format: tar.FormatPAX}); err != nil {
			return fmt.Errorf("packing %s: %w", rel, err)
		}
	}
	if err := writeFile(tw, rel, mode, s.uid, s.gid, data); err != nil {
		return fmt.Errorf("packing %s: %w", rel, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("packing %s: %w", rel, err)
	}
	if err := s.docker.CopyToContainer(ctx, s.id, s.cfg.Workdir, &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("writing %s into the sandbox: %w", rel, err)
	}
	return nil
}
