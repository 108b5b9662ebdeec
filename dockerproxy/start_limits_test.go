package dockerproxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
)

// TestStartNeedsLimits is an attack by a compromised service on the engine's host as a
// whole: a container with no memory or pids limit (a pin-like container, which frognano
// creates but never starts) started to fork or allocate until the host has nothing left. The
// create may pass (pins are made that way); the start must not.
func TestStartNeedsLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, "review-"+randHex(t, 4))
	ctx := context.Background()
	unlimited := int64(-1)
	for name, mod := range map[string]func(h *container.HostConfig){
		"NoMemoryLimit": func(h *container.HostConfig) { h.Memory, h.MemorySwap = 0, 0 },
		"NoPidsLimit":   func(h *container.HostConfig) { h.PidsLimit = nil },
		"PidsLimitOff":  func(h *container.HostConfig) { h.PidsLimit = &unlimited },
	} {
		t.Run(name, func(t *testing.T) {
			c, h := sandboxConfig(b.labels(t))
			mod(h)
			created, err := b.proxy.ContainerCreate(ctx, c, h, nil, nil, "")
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			b.remove(t, created.ID)
			err = b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{})
			if err == nil || !strings.Contains(err.Error(), "frognano docker-proxy refused") {
				t.Fatalf("a container without limits was started: %v", err)
			}
			if info, err := b.engine.ContainerInspect(ctx, created.ID); err != nil || info.State.Running || info.State.StartedAt != "0001-01-01T00:00:00Z" {
				t.Errorf("the container ran: %+v %v", info.State, err)
			}
		})
	}
}
