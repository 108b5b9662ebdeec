package dockerproxy_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"

	"github.com/frognano/frognano/runner/sandbox"
)

// notOurs is a workload on the same engine that is not the client's: a container that is not
// frognano's on the default bridge (so it has an address), another owner's sandbox, an image
// tag of someone else. secrets are the strings of them no answer through the proxy may hold.
type notOurs struct {
	name, id, otherOwnerID, execID string
	secrets                        []string
}

// startNotOurs makes the workload straight on the engine; the test's cleanup removes it.
func startNotOurs(t *testing.T, b *bundle) notOurs {
	t.Helper()
	ctx := context.Background()
	tag := randHex(t, 6)
	n := notOurs{name: "notours-" + tag}
	labelValue := "notours-label-" + tag
	ccfg := &container.Config{Image: sandbox.DefaultImage, Cmd: []string{"sleep", "300"},
		Labels: map[string]string{testLabel: "1", "com.example.notours": labelValue}}
	hcfg := &container.HostConfig{NetworkMode: network.NetworkBridge}
	created, err := b.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, n.name)
	if err != nil {
		t.Fatalf("creating the container that is not frognano's: %v", err)
	}
	n.id = created.ID
	b.remove(t, n.id)
	if err := b.engine.ContainerStart(ctx, n.id, container.StartOptions{}); err != nil {
		t.Fatalf("starting the container that is not frognano's: %v", err)
	}
	info, err := b.engine.ContainerInspect(ctx, n.id)
	if err != nil {
		t.Fatalf("inspecting the container that is not frognano's: %v", err)
	}
	ep := info.NetworkSettings.Networks[network.NetworkBridge]
	if ep == nil || ep.IPAddress == "" || ep.MacAddress == "" || ep.EndpointID == "" {
		t.Fatalf("the container that is not frognano's has no address on the bridge: %+v", info.NetworkSettings.Networks)
	}
	ex, err := b.engine.ContainerExecCreate(ctx, n.id, container.ExecOptions{Cmd: []string{"true"}})
	if err != nil {
		t.Fatalf("creating an exec in the container that is not frognano's: %v", err)
	}
	n.execID = ex.ID

	otherOwner := "notours-owner-" + tag
	labels := b.labels(t)
	labels[sandbox.LabelOwner] = otherOwner
	ccfg, hcfg = sandboxConfig(labels)
	other, err := b.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatalf("creating another owner's sandbox: %v", err)
	}
	n.otherOwnerID = other.ID
	b.remove(t, other.ID)

	imageTag := "notours-image-" + tag + ":latest"
	if err := b.engine.ImageTag(ctx, sandbox.DefaultImage, imageTag); err != nil {
		t.Fatalf("tagging an image that is not frognano's: %v", err)
	}
	t.Cleanup(func() {
		// The sandbox image keeps its own tag: this removes only the test's.
		if _, err := b.engine.ImageRemove(context.Background(), imageTag, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("removing the image tag %s: %v", imageTag, err)
		}
	})
	n.secrets = []string{n.name, n.id, n.id[:12], n.otherOwnerID, n.otherOwnerID[:12], ep.IPAddress,
		ep.MacAddress, ep.EndpointID, labelValue, otherOwner, "notours-image-" + tag}
	return n
}

// leaked returns what of n an answer holds.
func (n notOurs) leaked(answer string) []string {
	var found []string
	for _, s := range n.secrets {
		if strings.Contains(answer, s) {
			found = append(found, s)
		}
	}
	return found
}

// TestNothingOfOtherWorkloadsLeaks asks every route the proxy forwards that answers with what
// the engine holds, as a compromised service would to map the engine's other workloads, with
// a container that is not frognano's running on the default bridge, another owner's sandbox
// and an image tag of someone else's: no answer holds their names, IDs, addresses, labels or
// tags, and asking for one of them by name, ID or ID prefix is answered as for one that does
// not exist.
func TestNothingOfOtherWorkloadsLeaks(t *testing.T) {
	t.Parallel()
	b := setup(t, "leak-"+randHex(t, 4))
	n := startNotOurs(t, b)
	ctx := context.Background()
	ccfg, hcfg := sandboxConfig(b.labels(t))
	mine, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatalf("creating a sandbox through the proxy: %v", err)
	}
	b.remove(t, mine.ID)
	sandboxImage, err := b.engine.ImageInspect(ctx, sandbox.DefaultImage)
	if err != nil {
		t.Fatalf("inspecting the sandbox image: %v", err)
	}

	// The answers that list what the engine holds. The sandbox image also carries the tag of
	// someone else (startNotOurs).
	for _, tc := range []struct{ name, path string }{
		{"NetworkInspect", "/v1.41/networks/bridge"},
		{"NetworkInspectVerbose", "/v1.41/networks/bridge?verbose=true"},
		{"NetworkInspectScoped", "/v1.41/networks/bridge?scope=local&verbose=1"},
		{"Unversioned NetworkInspect", "/networks/bridge"},
		{"ImageList", "/v1.41/images/json"},
		{"ImageListAll", "/v1.41/images/json?all=1&digests=1&shared-size=1"},
		{"ImageListByReference", "/v1.41/images/json?all=1&filters=" + url.QueryEscape(`{"reference":{"notours-image-*":true}}`)},
		{"ImageListOtherLabel", "/v1.41/images/json?filters=" + url.QueryEscape(`{"label":{"dev.frognano.env":true}}`)},
		{"ImageInspect", "/v1.41/images/" + sandbox.DefaultImage + "/json"},
		{"ImageInspectByID", "/v1.41/images/" + sandboxImage.ID + "/json"},
		{"ContainerList", "/v1.41/containers/json?all=1&limit=50"},
		{"ContainerListByName", "/v1.41/containers/json?all=1&filters=" + url.QueryEscape(`{"name":{"notours":true}}`)},
		{"ContainerListLegacyFilters", "/v1.41/containers/json?all=1&filters=" + url.QueryEscape(`{"id":["`+n.id[:12]+`"]}`)},
		{"Version", "/v1.41/version"},
		{"Ping", "/_ping"},
		// A sandbox's own stats (its CPU time and peak memory, read once at Close: issue 22).
		{"StatsOfOwnSandbox", "/v1.41/containers/" + mine.ID + "/stats?stream=0&one-shot=1"},
		// What a sandbox's own layer holds (the seal check of a setup container: issue 28).
		{"ChangesOfOwnSandbox", "/v1.41/containers/" + mine.ID + "/changes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := b.doJSON(t, "GET", tc.path, nil)
			if status != 200 {
				t.Fatalf("GET %s answered %d: %s", tc.path, status, body)
			}
			if l := n.leaked(body); len(l) > 0 {
				t.Errorf("GET %s shows %q of what is not frognano's: %s", tc.path, l, body)
			}
		})
	}

	// The engine's other answers that describe everything it holds are not served at all, nor a
	// list with sizes (the engine would walk every listed container's layer to answer).
	for _, path := range []string{"/v1.41/info", "/v1.41/system/df", "/v1.41/events?until=1", "/v1.41/networks",
		"/v1.41/volumes", "/v1.41/containers/" + n.id + "/logs?stdout=1", "/v1.41/containers/" + mine.ID + "/top",
		"/v1.41/containers/" + mine.ID + "/stats?stream=1", "/v1.41/images/" + sandbox.DefaultImage + "/history",
		"/v1.41/images/search?term=x", "/v1.41/distribution/" + sandbox.DefaultImage + "/json", "/v1.41/plugins",
		"/v1.41/swarm", "/v1.41/nodes", "/v1.41/services", "/v1.41/tasks", "/v1.41/secrets", "/v1.41/configs",
		"/v1.41/containers/json?all=1&size=1"} {
		t.Run("Refused "+path, func(t *testing.T) {
			status, body := b.doJSON(t, "GET", path, nil)
			if status != 403 || !strings.Contains(body, "frognano docker-proxy refused") {
				t.Errorf("GET %s answered %d, want the proxy's 403: %s", path, status, body)
			}
		})
	}

	// What frognano reads still comes: the network's name and ID (the setup preflight), its
	// own sandbox in the list.
	t.Run("PreflightStillServed", func(t *testing.T) {
		nw, err := b.proxy.NetworkInspect(ctx, network.NetworkBridge, network.InspectOptions{Verbose: true})
		if err != nil || nw.Name != network.NetworkBridge || nw.ID == "" || len(nw.Containers) != 0 || len(nw.Services) != 0 || len(nw.Peers) != 0 {
			t.Errorf("the bridge through the proxy: %+v, %v; want its name and ID, nothing on it", nw, err)
		}
		list, err := b.proxy.ContainerList(ctx, container.ListOptions{All: true})
		if err != nil || len(list) != 1 || list[0].ID != mine.ID {
			t.Errorf("the list through the proxy: %v %v, want only %s", list, err, mine.ID)
		}
		img, err := b.proxy.ImageInspect(ctx, sandbox.DefaultImage)
		if err != nil || img.ID != sandboxImage.ID || !slices.Contains(img.RepoTags, sandbox.DefaultImage) {
			t.Errorf("the sandbox image through the proxy: %s %v %v, want %s with its tag", img.ID, img.RepoTags, err, sandboxImage.ID)
		}
		imgs, err := b.proxy.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("reference", sandbox.DefaultImage))})
		if err != nil || len(imgs) != 0 {
			t.Errorf("the image list through the proxy shows an image that is not an environment image: %v %v", imgs, err)
		}
	})

	// Asking for another workload's container or exec by name, ID or ID prefix is answered
	// exactly as asking for one that does not exist: the answer does not even say it exists.
	none := "0000000000000000000000000000000000000000000000000000000000000000"
	for _, tc := range []struct{ name, method, path, body string }{
		{"Inspect", "GET", "/v1.41/containers/REF/json", ""},
		{"Kill", "POST", "/v1.41/containers/REF/kill", ""},
		{"Remove", "DELETE", "/v1.41/containers/REF?force=1", ""},
		{"Exec", "POST", "/v1.41/containers/REF/exec", `{"Cmd":["id"]}`},
		{"Changes", "GET", "/v1.41/containers/REF/changes", ""},
		{"Commit", "POST", "/v1.41/commit?container=REF&repo=frognano-env&tag=x", `{"Labels":{"dev.frognano.env":"1"}}`},
	} {
		for _, ref := range []struct{ name, ref string }{
			{"ByName", n.name}, {"ByID", n.id}, {"ByIDPrefix", n.id[:12]}, {"OtherOwner", n.otherOwnerID},
			{"OtherOwnerByIDPrefix", n.otherOwnerID[:12]},
		} {
			t.Run(tc.name+ref.name, func(t *testing.T) {
				status, body := b.doJSON(t, tc.method, strings.Replace(tc.path, "REF", ref.ref, 1), tc.body)
				wantStatus, want := b.doJSON(t, tc.method, strings.Replace(tc.path, "REF", none, 1), tc.body)
				if status != wantStatus || strings.ReplaceAll(body, ref.ref, none) != want {
					t.Errorf("%s %s answered %d %s; for a container that does not exist %d %s", tc.method, tc.path, status, body, wantStatus, want)
				}
			})
		}
	}
	t.Run("ExecInspect", func(t *testing.T) {
		status, body := b.doJSON(t, "GET", "/v1.41/exec/"+n.execID+"/json", nil)
		wantStatus, want := b.doJSON(t, "GET", "/v1.41/exec/"+none+"/json", nil)
		if status != wantStatus || strings.ReplaceAll(body, n.execID, none) != want {
			t.Errorf("inspecting an exec of a container that is not frognano's answered %d %s; for one that does not exist %d %s", status, body, wantStatus, want)
		}
		if l := n.leaked(body); len(l) > 0 {
			t.Errorf("the exec inspect shows %q: %s", l, body)
		}
	})

	// A create under a name that another workload's container holds fails, but does not
	// say which container holds it.
	t.Run("CreateUnderTakenName", func(t *testing.T) {
		c, h := sandboxConfig(b.labels(t))
		status, body := b.doJSON(t, "POST", "/v1.41/containers/create?name="+n.name, container.CreateRequest{Config: c, HostConfig: h})
		if status != 409 {
			t.Errorf("a create under a taken name answered %d: %s", status, body)
		}
		if strings.Contains(body, n.id) || strings.Contains(body, n.id[:12]) {
			t.Errorf("a create under a taken name shows the ID of the container that holds it: %s", body)
		}
		var msg struct{ Message string }
		if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Message == "" {
			t.Errorf("the answer is not the engine's error shape: %s", body)
		}
	})
}
