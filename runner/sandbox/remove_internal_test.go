package sandbox

import (
	"context"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// removeContainer returns only once the container is gone, also when another removal of it is
// under way (the engine answers the second request 409 "removal already in progress" while it
// still has the container): a sandbox's Close that returned saying so has left nothing behind.
// Four removals race here over a container with a running process and a 64 MiB layer.
func TestRemoveContainerReturnsOnceGone(t *testing.T) {
	docker, err := NewClient()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	created, err := docker.ContainerCreate(ctx, &container.Config{
		Image:           DefaultImage,
		Entrypoint:      []string{"/bin/sh", "-c", "head -c 67108864 /dev/zero > /tmp/fill && touch /tmp/done && exec sleep 600"},
		Labels:          map[string]string{LabelOwner: "sandbox-test", LabelPurpose: "remove-test"},
		NetworkDisabled: true,
	}, &container.HostConfig{NetworkMode: network.NetworkNone, LogConfig: container.LogConfig{Type: "none"}}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = docker.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	})
	if err := docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, docker, created.ID, "/tmp/done")

	var wg sync.WaitGroup
	errs := make([]error, 4)
	gone := make([]bool, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = removeContainer(docker, created.ID, true)
			_, ierr := docker.ContainerInspect(context.Background(), created.ID)
			gone[i] = cerrdefs.IsNotFound(ierr)
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil || !gone[i] {
			t.Errorf("removal %d: err = %v, container gone when it returned: %v", i, errs[i], gone[i])
		}
	}
	// A container that is not there is removed.
	if err := removeContainer(docker, created.ID, true); err != nil {
		t.Errorf("removing a removed container: %v", err)
	}
	// An engine that cannot be reached is an error at once, not the 3 minutes of waiting (the bound
	// is loose so that a loaded machine does not fail it).
	noEngine, err := client.NewClientWithOpts(client.WithHost("unix://"+t.TempDir()+"/no-engine.sock"), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := removeContainer(noEngine, created.ID, true); err == nil || time.Since(start) > removeTimeout/6 {
		t.Errorf("removing through an engine that is not there: %v after %s", err, time.Since(start))
	}
}

// waitForFile waits until path exists in the running container id.
func waitForFile(t *testing.T, docker interface {
	ContainerStatPath(context.Context, string, string) (container.PathStat, error)
}, id, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	for ctx.Err() == nil {
		if _, err := docker.ContainerStatPath(ctx, id, path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s never appeared in container %s", path, id)
}
