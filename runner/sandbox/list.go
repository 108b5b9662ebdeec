package sandbox

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// Listed is one sandbox container on the engine, by its labels.
type Listed struct {
	ID      string // the container's full id
	Purpose string // LabelPurpose: "agent", "tests-before", "tests-after", "setup"
	RunID   string // LabelRunID
	Owner   string // LabelOwner
	State   string // the engine's: "running", "exited", "created"…
}

// List returns every sandbox container on the engine, of any owner, in the engine's order.
// Disk watchers are left out: each is part of the sandbox it watches.
func List(ctx context.Context, docker *client.Client) ([]Listed, error) {
	list, err := docker.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelSandbox))})
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	var out []Listed
	for _, c := range list {
		if c.Labels[LabelWatches] != "" {
			continue
		}
		out = append(out, Listed{ID: c.ID, Purpose: c.Labels[LabelPurpose], RunID: c.Labels[LabelRunID], Owner: c.Labels[LabelOwner], State: c.State})
	}
	return out, nil
}
