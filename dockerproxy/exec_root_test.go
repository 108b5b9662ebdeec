package dockerproxy_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// TestRootExecGainsNothing: the proxy lets a client exec as any user, root included, in
// one of frognano's containers (setup runs as root). That must give no more than the
// container already has: in a sandbox (no capability, no-new-privileges), a root exec has an
// empty capability set and no_new_privs, and a privileged exec is refused. Nothing the model
// runs can ask for an exec: it has no engine socket (TestIsolation/NoDockerSocket).
func TestRootExecGainsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, "review-"+randHex(t, 4))
	ctx := context.Background()
	c, h := sandboxConfig(b.labels(t))
	created, err := b.proxy.ContainerCreate(ctx, c, h, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	b.remove(t, created.ID)
	if err := b.proxy.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.proxy.ContainerExecCreate(ctx, created.ID, container.ExecOptions{User: "0:0", Privileged: true, Cmd: []string{"true"}}); err == nil ||
		!strings.Contains(err.Error(), "frognano docker-proxy refused") {
		t.Errorf("a privileged exec: %v, want a refusal", err)
	}
	ex, err := b.proxy.ContainerExecCreate(ctx, created.ID, container.ExecOptions{
		User: "0:0", Cmd: []string{"/bin/sh", "-c", "id -u; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status"},
		AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		t.Fatalf("a root exec: %v", err)
	}
	att, err := b.proxy.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, io.Discard, att.Reader); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(out.String()), " ")
	want := "0 CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 NoNewPrivs: 1"
	if got != want {
		t.Errorf("root exec in a sandbox sees %q, want %q", got, want)
	}
}
