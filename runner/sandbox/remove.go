package sandbox

import (
	"context"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// removeTimeout bounds the removal of one container. Removing is the engine deleting the
// container's writable layer, which on a loaded host with a naive storage driver
// (fuse-overlayfs) takes tens of seconds for a large layer; a setup that wrote past its disk
// limit leaves one of hundreds of megabytes.
const removeTimeout = 3 * time.Minute

// removePoll is how soon removeContainer first asks again whether a container it could not
// remove at once is gone (then less and less often).
const removePoll = 250 * time.Millisecond

// removeContainer removes the container id (forced: a running one is killed first; with its
// anonymous volumes when volumes) and returns once the engine no longer has it, or with why
// not. It runs with its own time limit, never the caller's context, because it is how a
// sandbox is cleaned up after its run was cancelled. The engine goes on removing a container
// when the request that asked for it ends (the client gave up, or a removal was already
// under way: 409 "removal ... already in progress"), so an error is only the answer once the
// container is still there at the end of the time limit (or at once, when the engine cannot be
// reached): a container reported removed is gone, never still being removed.
func removeContainer(docker *client.Client, id string, volumes bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	err := docker.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: volumes})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	wait := removePoll
	for {
		// An engine that cannot be reached is not waited for: the run ends now, and the
		// reapers remove what is left once it answers again.
		if client.IsErrConnectionFailed(err) {
			return err
		}
		info, ierr := docker.ContainerInspect(ctx, id)
		if cerrdefs.IsNotFound(ierr) {
			return nil
		}
		if client.IsErrConnectionFailed(ierr) {
			return err
		}
		// Not being removed: the first request failed for good (a dead container, a busy
		// mount): it is asked for again. One under way is waited for.
		if ierr == nil && info.State != nil && info.State.Status != "removing" {
			rerr := docker.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: volumes})
			if rerr == nil || cerrdefs.IsNotFound(rerr) {
				return nil
			}
			err = rerr
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still there after %s)", err, removeTimeout)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
