package dockerproxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/network"
)

// TestNetworkInspectOnlyAllowedNetworks: frognano inspects one network, the setup
// network its sandboxes may join (the proxy's allowed networks). Any other network's inspect
// names the engine's other containers on it, with their addresses: a compromised service has
// no use for that but mapping the engine's other workloads.
func TestNetworkInspectOnlyAllowedNetworks(t *testing.T) {
	t.Parallel()
	b := setup(t, "review-"+randHex(t, 4))
	ctx := context.Background()
	if _, err := b.proxy.NetworkInspect(ctx, "bridge", network.InspectOptions{}); err != nil {
		t.Errorf("inspecting the allowed setup network: %v", err)
	}
	for _, name := range []string{"host", "none-such-" + randHex(t, 4)} {
		_, err := b.proxy.NetworkInspect(ctx, name, network.InspectOptions{Verbose: true})
		if err == nil || !strings.Contains(err.Error(), "frognano docker-proxy refused") {
			t.Errorf("inspecting network %s: %v, want a refusal", name, err)
		}
	}
}
