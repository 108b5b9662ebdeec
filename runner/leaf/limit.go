package leaf

import (
	"io"
	"net/http"
	"sync/atomic"
)

// Limiter bounds the model requests in flight for a whole process (FROGNANO_MODEL_CONCURRENCY):
// every run and every attempt whose HTTP client went through the same Limiter shares it. A
// request holds its slot from the moment it is sent until its response body is closed, so a
// batching server sees at most that many concurrent generations from this process. Each
// process has its own Limiter: several worker processes against one model server add up.
type Limiter struct {
	slots   chan struct{}
	waiting atomic.Int64
}

// NewLimiter returns a Limiter of n slots; n <= 0 returns nil, which limits nothing.
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Waiting is the number of requests waiting for a slot now.
func (l *Limiter) Waiting() int {
	if l == nil {
		return 0
	}
	return int(l.waiting.Load())
}

// Client returns a copy of c (nil: a client with no timeout of its own, the caller's
// RequestTimeout applies through the context) whose requests go through l. A nil Limiter
// returns c unchanged.
func (l *Limiter) Client(c *http.Client) *http.Client {
	if l == nil {
		return c
	}
	cp := &http.Client{}
	if c != nil {
		*cp = *c
	}
	next := cp.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cp.Transport = &limitedTransport{l: l, next: next}
	return cp
}

type limitedTransport struct {
	l    *Limiter
	next http.RoundTripper
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.l.waiting.Add(1)
	select {
	case t.l.slots <- struct{}{}:
		t.l.waiting.Add(-1)
	case <-req.Context().Done():
		t.l.waiting.Add(-1)
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, req.Context().Err()
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		<-t.l.slots
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { <-t.l.slots }}
	return resp, nil
}

// releaseBody gives the slot back once, when the body is closed.
type releaseBody struct {
	io.ReadCloser
	once    atomic.Bool
	release func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	if b.once.CompareAndSwap(false, true) {
		b.release()
	}
	return err
}
