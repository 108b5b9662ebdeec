package runner

import (
	"context"
	"sync"

	"github.com/frognano/frognano/runner/sandbox"
)

// agentBox is the agent's sandbox while it is being made. The model's first turn needs no
// tool (its prompt is the system prompt and the task), so the loop starts at once and the
// sandbox is made meanwhile: a run no longer waits for container, copy and executor before its
// first model request. The first tool call waits for the sandbox instead.
//
// If making the sandbox fails, the loop's context is cancelled (no model request goes on for
// a run that cannot go on) and the run ends with the sandbox's error, as it did before.
type agentBox struct {
	done   chan struct{}
	sb     *sandbox.Sandbox
	err    error // already classified: "creating the agent sandbox: ..." or "starting the tool executor: ..."
	cancel context.CancelFunc
	close  sync.Once
}

// startAgentBox makes the sandbox with create in the background, then starts its executor.
// cancelLoop cancels the agent loop; it is called when either step fails.
func startAgentBox(ctx context.Context, create func(context.Context) (*sandbox.Sandbox, error), cancelLoop context.CancelFunc) *agentBox {
	b := &agentBox{done: make(chan struct{}), cancel: cancelLoop}
	go func() {
		defer close(b.done)
		sb, err := create(ctx)
		if err != nil {
			b.err = classify("creating the agent sandbox", err)
			b.cancel()
			return
		}
		// The network observer first, so that no command of the model can hold its port; a
		// failure is no reason to stop the run: the report says nothing was observed, and why.
		_ = sb.StartNetworkObserver(ctx)
		if err := sb.StartExecutor(ctx); err != nil {
			sb.Close()
			b.err = classify("starting the tool executor", err)
			b.cancel()
			return
		}
		b.sb = sb
	}()
	return b
}

// Call runs a tool call once the sandbox is ready.
func (b *agentBox) Call(ctx context.Context, name, arguments string) (string, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if b.err != nil {
		return "", b.err
	}
	return b.sb.Call(ctx, name, arguments)
}

// wait returns the sandbox, or why it could not be made, once that is known.
func (b *agentBox) wait() (*sandbox.Sandbox, error) {
	<-b.done
	return b.sb, b.err
}

// Close removes the sandbox, waiting for it to be made first (a sandbox still being made is
// removed as soon as it exists, never left behind).
func (b *agentBox) Close() {
	b.close.Do(func() {
		if sb, _ := b.wait(); sb != nil {
			sb.Close()
		}
	})
}
