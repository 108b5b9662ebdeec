package dockerproxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestHostileRequestsRefused sends what a compromised service would send to reach the host
// through the engine, against the real engine: each gets 403 (400 for what is unreadable)
// with the proxy's reason, and the engine's state is unchanged: no container created, the
// host's container untouched, no exec made, no image pulled, tagged or removed. A container or
// exec that is not the client's gets 404, as one that does not exist (TestNothingOfOtherWorkloadsLeaks).
// hiddenContainer is the proxy's answer for a container that is not the client's.
const hiddenContainer = "no such container among frognano's sandboxes"

func TestHostileRequestsRefused(t *testing.T) {
	t.Parallel()
	owner := "hostile-" + randHex(t, 4)
	b := setup(t, owner)
	ctx := context.Background()

	// A container of someone else on the same engine: no frognano label.
	ccfg, hcfg := sandboxConfig(map[string]string{testLabel: "1"})
	foreign, err := b.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "fnproxy-foreign-"+randHex(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, foreign.ID)
	if err := b.engine.ContainerStart(ctx, foreign.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	// A sandbox of another owner, and one of this owner (made through the proxy).
	other := b.labels(t)
	other[sandbox.LabelOwner] = "someone-else"
	ccfg, hcfg = sandboxConfig(other)
	otherC, err := b.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, otherC.ID)
	ccfg, hcfg = sandboxConfig(b.labels(t))
	mine, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatalf("an ordinary sandbox is refused: %v", err)
	}
	b.remove(t, mine.ID)
	if err := b.proxy.ContainerStart(ctx, mine.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := b.engine.ContainerInspect(ctx, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	var hostNet string
	nets, err := b.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", "host"))})
	if err == nil && len(nets) > 0 {
		hostNet = nets[0].ID
	}

	// create returns a create body: a locked-down sandbox of this owner, changed by mod.
	create := func(mod func(c *container.Config, h *container.HostConfig)) any {
		c, h := sandboxConfig(b.labels(t))
		c.Labels["dev.frognano.hostile"] = "1"
		mod(c, h)
		return container.CreateRequest{Config: c, HostConfig: h}
	}
	yes := true
	cases := []struct {
		name, method, path string
		body               any
		want               string // in the refusal
	}{
		{"Privileged", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.Privileged = true }), "privileged"},
		{"BindRoot", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.Binds = []string{"/:/host"} }), "bind mounts"},
		{"BindMountDockerSocket", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Mounts = []mount.Mount{{Type: mount.TypeBind, Source: "/var/run/docker.sock", Target: "/var/run/docker.sock"}}
		}), "mount of type \"bind\""},
		{"VolumeThatBindsRoot", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Mounts = []mount.Mount{{Type: mount.TypeVolume, Target: "/host", VolumeOptions: &mount.VolumeOptions{
				DriverConfig: &mount.Driver{Name: "local", Options: map[string]string{"type": "none", "o": "bind", "device": "/"}}}}}
		}), "driver options"},
		{"NamedVolume", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: "pgdata", Target: "/data"}}
		}), "named volume"},
		{"Tmpfs mount type", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Mounts = []mount.Mount{{Type: mount.TypeTmpfs, Target: "/x"}}
		}), "only volumes"},
		{"Unlabelled", "POST", "/v1.41/containers/create", create(func(c *container.Config, _ *container.HostConfig) { c.Labels = map[string]string{testLabel: "1"} }), "does not carry the label"},
		{"OtherOwner", "POST", "/v1.41/containers/create", create(func(c *container.Config, _ *container.HostConfig) { c.Labels[sandbox.LabelOwner] = "someone-else" }), "not to this proxy's owner"},
		{"CapSysAdmin", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.CapAdd = []string{"SYS_ADMIN"} }), "may not be added"},
		{"CapAll", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.CapAdd = []string{"ALL"} }), "may not be added"},
		{"DacReadSearchOutsideTheWatcher", "POST", "/v1.41/containers/create", create(func(c *container.Config, h *container.HostConfig) {
			h.CapAdd = []string{"cap_dac_read_search"}
			c.Entrypoint = []string{"python3", "-c", "open_by_handle_at"}
		}), "disk watcher"},
		{"HostNetwork", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.NetworkMode = "host" }), "network \"host\""},
		{"HostNetworkByID", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.NetworkMode = container.NetworkMode(hostNet) }), "is not allowed"},
		{"OtherContainersNetwork", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.NetworkMode = container.NetworkMode("container:" + foreign.ID)
		}), "network \"container:"},
		{"HostPID", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.PidMode = "host" }), "PID mode"},
		{"OtherContainersPID", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.PidMode = container.PidMode("container:" + foreign.ID)
		}), "PID mode"},
		{"HostIPC", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.IpcMode = "host" }), "IPC mode"},
		{"HostUTS", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.UTSMode = "host" }), "UTS mode"},
		{"HostUserns", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.UsernsMode = "host" }), "user namespace"},
		{"HostCgroupns", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.CgroupnsMode = "host" }), "cgroup namespace"},
		{"Device", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Devices = []container.DeviceMapping{{PathOnHost: "/dev/sda", PathInContainer: "/dev/sda", CgroupPermissions: "rwm"}}
		}), "devices"},
		{"GPU", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.DeviceRequests = []container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"gpu"}}}}
		}), "devices"},
		{"SeccompUnconfined", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.SecurityOpt = []string{"seccomp=unconfined"} }), "security option"},
		{"ApparmorUnconfined", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.SecurityOpt = []string{"apparmor:unconfined"} }), "security option"},
		{"LabelDisable", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.SecurityOpt = []string{"label=disable"} }), "security option"},
		{"UnmaskProc", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.MaskedPaths = []string{} }), "MaskedPaths"},
		{"Sysctl", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) {
			h.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1"}
		}), "sysctls"},
		{"PublishPort", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.PublishAllPorts = true }), "publishing ports"},
		{"CgroupParent", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.CgroupParent = "/" }), "cgroup placement"},
		{"OOMKillDisable", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.OomKillDisable = &yes }), "OOM killer"},
		{"VolumesFrom", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.VolumesFrom = []string{foreign.ID} }), "VolumesFrom"},
		{"SyslogDriver", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.LogConfig.Type = "syslog" }), "log driver"},
		{"RestartAlways", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.RestartPolicy.Name = "always" }), "restart policy"},
		{"OtherRuntime", "POST", "/v1.41/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.Runtime = "io.containerd.runc.v2" }), "runtime"},
		{"CaseVariantField", "POST", "/v1.41/containers/create",
			`{"Image":"frognano-sandbox:latest","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"` + owner + `"},"HostConfig":{"Privileged":false,"privileged":true}}`, "privileged"},
		{"UnknownField", "POST", "/v1.41/containers/create",
			`{"Image":"frognano-sandbox:latest","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"` + owner + `"},"HostConfig":{"Unknown":1}}`, "unknown field"},
		// Docker reads HostConfig fields at the top level too (a deprecated layout).
		{"TopLevelHostConfig", "POST", "/v1.41/containers/create",
			`{"Image":"frognano-sandbox:latest","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"` + owner + `"},"Privileged":true,"Binds":["/:/host"]}`, "unknown field"},
		{"TrailingData", "POST", "/v1.41/containers/create",
			`{"Image":"frognano-sandbox:latest","Labels":{"dev.frognano.sandbox":"1"}} {"HostConfig":{"Privileged":true}}`, "data after"},

		{"InspectForeign", "GET", "/v1.41/containers/" + foreign.ID + "/json", nil, hiddenContainer},
		{"InspectOtherOwner", "GET", "/v1.41/containers/" + otherC.ID + "/json", nil, hiddenContainer},
		{"ExecInForeign", "POST", "/v1.41/containers/" + foreign.ID + "/exec", container.ExecOptions{Cmd: []string{"id"}}, hiddenContainer},
		{"PrivilegedExec", "POST", "/v1.41/containers/" + mine.ID + "/exec", container.ExecOptions{Cmd: []string{"id"}, Privileged: true}, "privileged exec"},
		{"RemoveForeign", "DELETE", "/v1.41/containers/" + foreign.ID + "?force=1", nil, hiddenContainer},
		{"KillForeign", "POST", "/v1.41/containers/" + foreign.ID + "/kill", nil, hiddenContainer},
		{"CopyIntoForeign", "PUT", "/v1.41/containers/" + foreign.ID + "/archive?path=/tmp", nil, hiddenContainer},
		{"CopyOutOfSandbox", "GET", "/v1.41/containers/" + mine.ID + "/archive?path=/etc", nil, "not one frognano uses"},
		{"Logs", "GET", "/v1.41/containers/" + foreign.ID + "/logs?stdout=1", nil, "not one frognano uses"},
		{"Update", "POST", "/v1.41/containers/" + mine.ID + "/update", `{"Memory":0}`, "not one frognano uses"},
		{"StartWithHostConfig", "POST", "/v1.41/containers/" + mine.ID + "/start", `{"Privileged":true,"Binds":["/:/host"]}`, "start takes no body"},
		{"OldAPIVersion", "POST", "/v1.23/containers/" + mine.ID + "/start", `{"Privileged":true}`, "older than"},
		{"RemoveLink", "DELETE", "/v1.41/containers/" + mine.ID + "?link=1", nil, "query parameter \"link\""},
		{"ImagePull", "POST", "/v1.41/images/create?fromImage=busybox&tag=latest", nil, "not one frognano uses"},
		{"ImageLoad", "POST", "/v1.41/images/load", "", "not one frognano uses"},
		{"Build", "POST", "/v1.41/build?t=x", "", "not one frognano uses"},
		{"RemoveSandboxImage", "DELETE", "/v1.41/images/" + sandbox.DefaultImage, nil, "not a frognano environment image"},
		{"RetagSandboxImage", "POST", "/v1.41/images/" + sandbox.DefaultImage + "/tag?repo=frognano-env&tag=x", nil, "not a frognano environment image"},
		{"TagOverSandboxImage", "POST", "/v1.41/images/" + sandbox.DefaultImage + "/tag?repo=frognano-sandbox&tag=latest", nil, "only frognano-env tags"},
		{"CommitAsSandboxImage", "POST", "/v1.41/commit?container=" + mine.ID + "&repo=frognano-sandbox&tag=latest", `{"Labels":{"dev.frognano.env":"1"}}`, "must be tagged frognano-env"},
		{"CommitForeign", "POST", "/v1.41/commit?container=" + foreign.ID + "&repo=frognano-env&tag=x", `{"Labels":{"dev.frognano.env":"1"}}`, hiddenContainer},
		{"CommitUnlabelledImage", "POST", "/v1.41/commit?container=" + mine.ID + "&repo=frognano-env&tag=x", `{}`, "must carry the label"},
		{"CommitWithChanges", "POST", "/v1.41/commit?container=" + mine.ID + "&repo=frognano-env&tag=x&changes=USER+root", `{"Labels":{"dev.frognano.env":"1"}}`, "query parameter \"changes\""},
		{"RemoveNamedVolume", "DELETE", "/v1.41/volumes/pgdata", nil, "anonymous volume"},
		{"CreateVolume", "POST", "/v1.41/volumes/create", `{"Name":"x"}`, "not one frognano uses"},
		{"CreateNetwork", "POST", "/v1.41/networks/create", `{"Name":"x"}`, "not one frognano uses"},
		{"ConnectNetwork", "POST", "/v1.41/networks/bridge/connect", `{"Container":"x"}`, "not one frognano uses"},
		{"Info", "GET", "/v1.41/info", nil, "not one frognano uses"},
		{"Events", "GET", "/v1.41/events", nil, "not one frognano uses"},
		{"SwarmInit", "POST", "/v1.41/swarm/init", `{}`, "not one frognano uses"},
		{"PluginInstall", "POST", "/v1.41/plugins/pull?remote=x", `[]`, "not one frognano uses"},
		{"Secrets", "GET", "/v1.41/secrets", nil, "not one frognano uses"},
		{"Session", "POST", "/session", nil, "not one frognano uses"},
		{"Unversioned", "POST", "/containers/create", create(func(_ *container.Config, h *container.HostConfig) { h.Privileged = true }), "privileged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := b.doJSON(t, tc.method, tc.path, tc.body)
			if status != 403 && status != 400 && !(status == 404 && tc.want == hiddenContainer) {
				t.Fatalf("%s %s answered %d, want 403: %s", tc.method, tc.path, status, body)
			}
			var msg struct{ Message string }
			if err := json.Unmarshal([]byte(body), &msg); err != nil {
				t.Fatalf("the refusal is not the engine's error shape: %s", body)
			}
			if !strings.HasPrefix(msg.Message, "frognano docker-proxy refused "+tc.method+" ") || !strings.Contains(msg.Message, tc.want) {
				t.Errorf("the refusal %q does not say %q", msg.Message, tc.want)
			}
		})
	}

	// Nothing changed: no container was created, the foreign one and its processes are as they
	// were, no image appeared or went, the sandbox's volume is there.
	list, err := b.engine.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", "dev.frognano.hostile"))})
	if err != nil || len(list) != 0 {
		t.Errorf("refused creates left containers: %v %v", list, err)
	}
	fi, err := b.engine.ContainerInspect(ctx, foreign.ID)
	if err != nil || !fi.State.Running || len(fi.ExecIDs) != 0 {
		t.Errorf("the foreign container was touched: running %v, execs %v, %v", fi.State != nil && fi.State.Running, fi.ExecIDs, err)
	}
	mi, err := b.engine.ContainerInspect(ctx, mine.ID)
	if err != nil || !mi.State.Running || len(mi.ExecIDs) != 0 || mi.State.StartedAt != info.State.StartedAt {
		t.Errorf("the sandbox was touched: %v", err)
	}
	for _, ref := range []string{"frognano-env:x", "frognano-sandbox:x"} {
		if _, err := b.engine.ImageInspect(ctx, ref); err == nil {
			t.Errorf("image %s exists after refused tags and commits", ref)
			b.engine.ImageRemove(ctx, ref, image.RemoveOptions{})
		}
	}
	if _, err := b.engine.ImageInspect(ctx, sandbox.DefaultImage); err != nil {
		t.Errorf("the sandbox image is gone: %v", err)
	}

	// The Go client shows the reason.
	c, h := sandboxConfig(b.labels(t))
	h.Privileged = true
	if _, err := b.proxy.ContainerCreate(ctx, c, h, nil, nil, ""); err == nil || !strings.Contains(err.Error(), "frognano docker-proxy refused POST /v1.41/containers/create: privileged containers are not allowed") {
		t.Errorf("the client's error for a privileged create: %v", err)
	}

	// The list shows only this owner's sandboxes, whatever the filters ask.
	all, err := b.proxy.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("id", foreign.ID))})
	if err != nil || len(all) != 0 {
		t.Errorf("the list through the proxy shows a foreign container: %v %v", all, err)
	}
	all, err = b.proxy.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil || len(all) != 1 || all[0].ID != mine.ID {
		t.Errorf("the list through the proxy: %v %v, want only %s", all, err, mine.ID)
	}
	// An exec of the foreign container, made on the engine, cannot be started or read through
	// the proxy either.
	ex, err := b.engine.ContainerExecCreate(ctx, foreign.ID, container.ExecOptions{Cmd: []string{"touch", "/tmp/started"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1.41/exec/" + ex.ID + "/start", "/v1.41/exec/" + ex.ID + "/json"} {
		method := "POST"
		if strings.HasSuffix(path, "/json") {
			method = "GET"
		}
		if status, body := b.doJSON(t, method, path, `{"Detach":true}`); status != 404 || !strings.Contains(body, "no such exec instance among frognano's sandboxes") {
			t.Errorf("%s %s: %d %s", method, path, status, body)
		}
	}
	if ei, err := b.engine.ContainerExecInspect(ctx, ex.ID); err != nil || ei.Running || ei.Pid != 0 {
		t.Errorf("the foreign exec ran: %+v %v", ei, err)
	}
}
