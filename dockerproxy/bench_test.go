package dockerproxy_test

import (
	"context"
	"io"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// BenchmarkExec measures one exec with an attached stream (what each tool call of the agent
// costs in Docker calls: create, attach, inspect) straight to the engine and through the
// proxy, whose checks add an inspect of the container (and of the exec) to each call.
func BenchmarkExec(b *testing.B) {
	bb := setup(b, "bench-"+randHex(b, 4))
	ctx := context.Background()
	ccfg, hcfg := sandboxConfig(bb.labels(b))
	created, err := bb.engine.ContainerCreate(ctx, ccfg, hcfg, nil, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	defer bb.engine.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	if err := bb.engine.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *client.Client
	}{{"Engine", bb.engine}, {"Proxy", bb.proxy}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				ex, err := tc.c.ContainerExecCreate(ctx, created.ID, container.ExecOptions{Cmd: []string{"true"}, AttachStdout: true})
				if err != nil {
					b.Fatal(err)
				}
				att, err := tc.c.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, att.Reader)
				att.Close()
				if info, err := tc.c.ContainerExecInspect(ctx, ex.ID); err != nil || info.ExitCode != 0 {
					b.Fatalf("exec: %+v %v", info, err)
				}
			}
		})
	}
}
