package leaf

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// fakeTools is an in-memory Tools: it records every call and answers "NAME: ARGS"
// unless fn is set.
type fakeTools struct {
	mu    sync.Mutex
	calls []toolCall
	fn    func(ctx context.Context, name, args string) (string, error)
}

type toolCall struct{ Name, Arguments string }

func (f *fakeTools) Call(ctx context.Context, name, args string) (string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, toolCall{name, args})
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, name, args)
	}
	return fmt.Sprintf("%s: %s", name, args), nil
}

func (f *fakeTools) Calls() []toolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]toolCall(nil), f.calls...)
}

// bundle is what setup returns: a scripted server, a config pointing at it, fake
// tools, the retry waits Run asked for (recorded instead of slept) and the log.
type bundle struct {
	srv   *leaftest.Server
	cfg   Config
	tools *fakeTools
	log   *bytes.Buffer

	mu    sync.Mutex
	waits []time.Duration
}

func (b *bundle) Waits() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.waits...)
}

// setup starts a scripted model server for s and returns a config whose retry waits
// are recorded, not slept, so retry tests run instantly and assert exact waits.
func setup(t testing.TB, s leaftest.Script) *bundle {
	t.Helper()
	b := &bundle{srv: leaftest.NewServer(t, s), tools: &fakeTools{}, log: &bytes.Buffer{}}
	b.cfg = DefaultConfig()
	b.cfg.BaseURL = b.srv.URL
	b.cfg.APIKey = "test-key"
	b.cfg.RetryBaseDelay = time.Millisecond
	b.cfg.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: b.log}, nil))
	b.cfg.sleep = func(ctx context.Context, d time.Duration) error {
		b.mu.Lock()
		b.waits = append(b.waits, d)
		b.mu.Unlock()
		return ctx.Err()
	}
	return b
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
