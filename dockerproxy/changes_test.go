package dockerproxy_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// TestChangesOnlyOfOwnContainers: the seal check's list of what setup changed (GET
// /containers/{id}/changes) is served for frognano's own containers, read-only: a container
// that is not the client's is answered as one that does not exist (TestNothingOfOtherWorkloadsLeaks
// asks by name, ID and prefix), and the route takes no other method and no query.
func TestChangesOnlyOfOwnContainers(t *testing.T) {
	t.Parallel()
	b := setup(t, "changes-"+randHex(t, 4))
	ctx := context.Background()
	ccfg, hcfg := sandboxConfig(b.labels(t))
	ccfg.User, ccfg.Cmd = "0:0", []string{"sh", "-c", "echo setup-was-here > /etc/frognano-probe; sleep 300"}
	hcfg.ReadonlyRootfs = false
	created, err := b.proxy.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		t.Fatalf("create through the proxy: %v", err)
	}
	b.remove(t, created.ID)
	if err := b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start: %v", err)
	}
	// Stopped, as the seal check asks (the engine lists a stopped container's changes too).
	for {
		changes, err := b.proxy.ContainerDiff(ctx, created.ID)
		if err != nil {
			t.Fatalf("changes through the proxy: %v", err)
		}
		if slices.ContainsFunc(changes, func(c container.FilesystemChange) bool {
			return c.Path == "/etc/frognano-probe" && c.Kind == container.ChangeAdd
		}) {
			break
		}
	}
	zero := 0
	if err := b.proxy.ContainerStop(ctx, created.ID, container.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		t.Fatal(err)
	}
	if changes, err := b.proxy.ContainerDiff(ctx, created.ID); err != nil || len(changes) == 0 {
		t.Errorf("changes of the stopped container: %v, %v", changes, err)
	}
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v1.41/containers/" + created.ID + "/changes"},
		{"DELETE", "/v1.41/containers/" + created.ID + "/changes"},
		{"GET", "/v1.41/containers/" + created.ID + "/changes?kind=1"},
		{"GET", "/v1.41/containers/" + created.ID + "/changes/x"},
	} {
		status, body := b.doJSON(t, tc.method, tc.path, nil)
		if status != 403 || !strings.Contains(body, "frognano docker-proxy refused") {
			t.Errorf("%s %s answered %d, want the proxy's 403: %s", tc.method, tc.path, status, body)
		}
	}
}
