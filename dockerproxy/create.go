package dockerproxy

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// lookups are what the container checks ask of the engine. Proxy implements it against the
// engine; the fuzz test with a stand-in.
type lookups interface {
	// image returns a local image's ID, labels and the volumes its configuration declares; a
	// Refusal when there is none.
	image(ctx context.Context, ref string) (imageFacts, error)
	// container returns a container's full ID and labels; a Refusal when there is none.
	container(ctx context.Context, ref string) (id string, labels map[string]string, err error)
	// volumeUsers returns the labels of every container that uses the volume.
	volumeUsers(ctx context.Context, name string) ([]map[string]string, error)
}

// imageFacts is what the checks need to know of an image.
type imageFacts struct {
	ID      string
	Labels  map[string]string
	Volumes map[string]struct{} // VOLUME in the image's configuration: anonymous, writable volumes
}

// watcherWorkspace is where the disk watcher mounts the workspace it measures (runner/sandbox's
// watcherScript names it).
const watcherWorkspace = "/workspace"

// watcherEnv is the only environment the disk watcher is given (runner/sandbox's).
const watcherEnv = "LC_ALL=C"

// watcherCapability is the one capability outside sandbox.SetupCapabilities that frognano
// adds: the disk watcher's, to read the whole workspace whatever its modes.
const watcherCapability = "DAC_READ_SEARCH"

// anonymousVolume is the name Docker gives an anonymous volume.
var anonymousVolume = regexp.MustCompile(`^[0-9a-f]{64}$`)

// containerName is what Docker accepts as a container's name.
var containerName = regexp.MustCompile(`^/?[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$`)

// ours reports why labels are not those of a frognano sandbox of the proxy's owner.
func (p *Proxy) ours(labels map[string]string) error {
	if labels[sandbox.LabelSandbox] != "1" {
		return refuse("the container does not carry the label %s=1: frognano acts only on its own sandboxes", sandbox.LabelSandbox)
	}
	if !p.ownerOK(labels[sandbox.LabelOwner]) {
		return refuse("the container belongs to owner %q, not to this proxy's owner %q", labels[sandbox.LabelOwner], p.cfg.Owner)
	}
	return nil
}

// ownerOK reports whether owner is the proxy's owner O (any, when it has none), or one of the
// owners that O's commands derive from it, such as run@O (frognano run) and doctor@O.
func (p *Proxy) ownerOK(owner string) bool {
	return p.cfg.Owner == "" || owner == p.cfg.Owner || strings.HasSuffix(owner, "@"+p.cfg.Owner)
}

// normCap is a capability's name as Docker reads it: upper case, without CAP_.
func normCap(c string) string {
	return strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
}

// checkCreate checks a container create request's body and returns the body to forward.
func (p *Proxy) checkCreate(ctx context.Context, body []byte, lk lookups) ([]byte, error) {
	var req container.CreateRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if req.Config == nil {
		return nil, badRequest("no container configuration")
	}
	if req.HostConfig == nil {
		req.HostConfig = &container.HostConfig{}
	}
	if err := p.checkConfig(ctx, &req, lk); err != nil {
		return nil, err
	}
	return json.Marshal(&req)
}

// checkConfig holds the rules of a container's configuration.
func (p *Proxy) checkConfig(ctx context.Context, req *container.CreateRequest, lk lookups) error {
	c, h := req.Config, req.HostConfig
	if err := p.ours(c.Labels); err != nil {
		return err
	}
	if c.Image == "" {
		return badRequest("no image named")
	}
	for v := range c.Volumes {
		if !path.IsAbs(v) || strings.ContainsAny(v, ":,") {
			return refuse("volume %q: only anonymous volumes at absolute paths", v)
		}
	}
	if req.NetworkingConfig != nil && len(req.NetworkingConfig.EndpointsConfig) > 0 {
		return refuse("endpoint settings (NetworkingConfig) are not allowed")
	}

	// Host access: privileges, paths, devices, namespaces.
	switch {
	case h.Privileged:
		return refuse("privileged containers are not allowed")
	case len(h.Binds) > 0:
		return refuse("bind mounts of host paths are not allowed (%q)", h.Binds[0])
	case h.ContainerIDFile != "":
		return refuse("ContainerIDFile writes on the engine's host: not allowed")
	case len(h.VolumesFrom) > 0:
		return refuse("VolumesFrom shares another container's volumes: not allowed")
	case h.VolumeDriver != "":
		return refuse("volume drivers are not allowed")
	case len(h.Devices) > 0, len(h.DeviceRequests) > 0, len(h.DeviceCgroupRules) > 0:
		return refuse("devices are not allowed")
	case h.PidMode != "":
		return refuse("PID mode %q: only the container's own PID namespace is allowed", h.PidMode)
	case h.IpcMode != "" && h.IpcMode != "private" && h.IpcMode != "none":
		return refuse("IPC mode %q: only private or none", h.IpcMode)
	case h.UTSMode != "":
		return refuse("UTS mode %q: only the container's own", h.UTSMode)
	case h.UsernsMode != "":
		return refuse("user namespace mode %q: only the engine's default", h.UsernsMode)
	case h.CgroupnsMode != "" && h.CgroupnsMode != "private":
		return refuse("cgroup namespace mode %q: only private", h.CgroupnsMode)
	case h.Cgroup != "", h.CgroupParent != "":
		return refuse("cgroup placement (Cgroup, CgroupParent) is not allowed")
	case h.MaskedPaths != nil, h.ReadonlyPaths != nil:
		return refuse("MaskedPaths and ReadonlyPaths may not be changed (that would unmask /proc and /sys)")
	case len(h.Sysctls) > 0:
		return refuse("sysctls are not allowed")
	case h.Runtime != "":
		return refuse("runtime %q: only the engine's default runtime", h.Runtime)
	case h.Isolation != "" && h.Isolation != "default":
		return refuse("isolation %q is not allowed", h.Isolation)
	case len(h.PortBindings) > 0, h.PublishAllPorts:
		return refuse("publishing ports on the engine's host is not allowed")
	case len(h.Links) > 0:
		return refuse("links are not allowed")
	case len(h.GroupAdd) > 0:
		return refuse("additional groups are not allowed")
	case len(h.Annotations) > 0:
		return refuse("runtime annotations are not allowed")
	case len(h.StorageOpt) > 0:
		return refuse("storage options are not allowed")
	case h.OomScoreAdj < 0:
		return refuse("a negative OOM score adjustment is not allowed")
	case h.OomKillDisable != nil && *h.OomKillDisable:
		return refuse("disabling the OOM killer is not allowed")
	case h.CPURealtimePeriod != 0, h.CPURealtimeRuntime != 0:
		return refuse("real-time CPU scheduling is not allowed")
	case len(h.BlkioDeviceReadBps) > 0, len(h.BlkioDeviceWriteBps) > 0, len(h.BlkioDeviceReadIOps) > 0,
		len(h.BlkioDeviceWriteIOps) > 0, len(h.BlkioWeightDevice) > 0:
		return refuse("per-device I/O settings name host devices: not allowed")
	case h.RestartPolicy.Name != "" && h.RestartPolicy.Name != container.RestartPolicyDisabled:
		return refuse("restart policy %q: a sandbox must end", h.RestartPolicy.Name)
	}
	switch h.LogConfig.Type {
	case "", "none", "json-file", "local":
	default:
		return refuse("log driver %q is not allowed", h.LogConfig.Type)
	}
	if len(h.LogConfig.Config) > 0 {
		return refuse("log driver options are not allowed")
	}
	for _, o := range h.SecurityOpt {
		switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(o)), "=", ":") {
		case "no-new-privileges", "no-new-privileges:true":
		default:
			return refuse("security option %q is not allowed (only no-new-privileges)", o)
		}
	}

	// The network: none, or one the operator allowed.
	mode := string(h.NetworkMode)
	if mode == "" || mode == "default" {
		mode = "bridge"
	}
	if !p.networks[mode] {
		return refuse("network %q is not allowed (allowed: none and the networks given to the proxy)", string(h.NetworkMode))
	}

	// Capabilities: the setup phase's, and the disk watcher's one more.
	watcher := false
	for _, raw := range h.CapAdd {
		c := normCap(raw)
		switch {
		case slices.Contains(sandbox.SetupCapabilities, c):
		case c == watcherCapability:
			watcher = true
		default:
			return refuse("capability %q may not be added", raw)
		}
	}
	if watcher {
		if err := p.checkWatcher(ctx, req, lk); err != nil {
			return err
		}
	}

	// Mounts: anonymous volumes, or a volume only frognano's own sandboxes use.
	for _, m := range h.Mounts {
		if m.Type != mount.TypeVolume {
			return refuse("mount of type %q is not allowed (only volumes)", m.Type)
		}
		if m.BindOptions != nil || m.TmpfsOptions != nil {
			return refuse("mount options of another type are not allowed")
		}
		if vo := m.VolumeOptions; vo != nil && (vo.DriverConfig != nil || vo.Subpath != "") {
			return refuse("volume driver options and subpaths are not allowed (a local volume can bind a host path)")
		}
		if !path.IsAbs(m.Target) {
			return refuse("mount target %q is not an absolute path", m.Target)
		}
		if m.Source == "" {
			continue
		}
		if !anonymousVolume.MatchString(m.Source) {
			return refuse("named volume %q is not allowed (only a sandbox's anonymous volumes)", m.Source)
		}
		users, err := lk.volumeUsers(ctx, m.Source)
		if err != nil {
			return err
		}
		if len(users) == 0 {
			return refuse("volume %s is not a running sandbox's volume", m.Source)
		}
		for _, u := range users {
			if err := p.ours(u); err != nil {
				return refuse("volume %s is used by a container that is not frognano's", m.Source)
			}
		}
	}
	return nil
}

// checkWatcher allows DAC_READ_SEARCH to the disk watcher alone: its exact command, on an image
// no setup wrote, watching one of frognano's sandboxes, read-only and offline. "Its exact
// command" means the program too, not only the entrypoint's words: nothing the client sends may
// decide which file `timeout`, `sh` or `du` is (PATH or LD_* in the environment, a mount or a
// writable volume or tmpfs over the image's directories) or run another program beside it (a
// health check). The image is named by the ID that was checked, so a tag moved meanwhile
// cannot swap it.
func (p *Proxy) checkWatcher(ctx context.Context, req *container.CreateRequest, lk lookups) error {
	c, h := req.Config, req.HostConfig
	if !sandbox.IsWatcherEntrypoint(c.Entrypoint) || len(c.Cmd) > 0 {
		return refuse("capability %s is allowed only to frognano's disk watcher command", watcherCapability)
	}
	if !h.ReadonlyRootfs || string(h.NetworkMode) != "none" || len(h.Mounts) != 1 || !h.Mounts[0].ReadOnly {
		return refuse("capability %s is allowed only to an offline container with a read-only root and one read-only volume", watcherCapability)
	}
	if h.Mounts[0].Target != watcherWorkspace {
		return refuse("capability %s is allowed only with the watched volume at %s, not %q", watcherCapability, watcherWorkspace, h.Mounts[0].Target)
	}
	for _, e := range c.Env {
		if e != watcherEnv {
			return refuse("capability %s is allowed only with the environment %s, not %q", watcherCapability, watcherEnv, e)
		}
	}
	if len(c.Volumes) > 0 || len(h.Tmpfs) > 0 {
		return refuse("capability %s is not allowed with volumes or tmpfs mounts besides the watched volume", watcherCapability)
	}
	if c.Healthcheck != nil && !slices.Equal(c.Healthcheck.Test, []string{"NONE"}) {
		return refuse("capability %s is not allowed with a health check (it runs a command of its own)", watcherCapability)
	}
	img, err := lk.image(ctx, c.Image)
	if err != nil {
		return err
	}
	if img.Labels[envpkg.LabelEnv] != "" {
		return refuse("capability %s is not allowed on an environment image (a setup script wrote it)", watcherCapability)
	}
	if len(img.Volumes) > 0 {
		return refuse("capability %s is not allowed on an image that declares volumes (writable places the client can copy a program into)", watcherCapability)
	}
	if img.ID == "" {
		return refuse("image %q has no ID", c.Image)
	}
	c.Image = img.ID
	// The image's own health check, if it has one, does not run either.
	c.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
	watched := c.Labels[sandbox.LabelWatches]
	if watched == "" {
		return refuse("capability %s is allowed only to a container labelled %s", watcherCapability, sandbox.LabelWatches)
	}
	_, _, err = p.ownContainer(ctx, lk, watched)
	return err
}

// checkExec checks an exec create body and returns the body to forward.
func checkExec(body []byte) ([]byte, error) {
	var o container.ExecOptions
	if err := decodeStrict(body, &o); err != nil {
		return nil, err
	}
	if o.Privileged {
		return nil, refuse("privileged exec is not allowed")
	}
	if len(o.Cmd) == 0 {
		return nil, badRequest("no command")
	}
	return json.Marshal(&o)
}

// checkExecStart checks an exec start body and returns the body to forward.
func checkExecStart(body []byte) ([]byte, error) {
	var o container.ExecStartOptions
	if len(strings.TrimSpace(string(body))) == 0 {
		return json.Marshal(&o)
	}
	if err := decodeStrict(body, &o); err != nil {
		return nil, err
	}
	return json.Marshal(&o)
}

// checkCommitConfig checks the image configuration of a commit: an environment image, labelled.
func checkCommitConfig(body []byte) ([]byte, error) {
	var c container.Config
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, refuse("a committed image must carry the label %s=1", envpkg.LabelEnv)
	}
	if err := decodeStrict(body, &c); err != nil {
		return nil, err
	}
	if c.Labels[envpkg.LabelEnv] != "1" {
		return nil, refuse("a committed image must carry the label %s=1", envpkg.LabelEnv)
	}
	for v := range c.Volumes {
		if !path.IsAbs(v) || strings.ContainsAny(v, ":,") {
			return nil, refuse("volume %q: only anonymous volumes at absolute paths", v)
		}
	}
	return json.Marshal(&c)
}

// validName reports whether s is a plausible container name, ID or ID prefix.
func validName(s string) error {
	if !containerName.MatchString(s) {
		return badRequest("%q is not a container name or ID", s)
	}
	return nil
}
