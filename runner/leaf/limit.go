package leaf

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

// Limiter bounds the model requests in flight for a whole process (FROGNANO_MODEL_CONCURRENCY):
// every run and every attempt whose HTTP client went through the same Limiter shares it. A
// request holds its slot from the moment it is sent until its response body is closed, so a
// batching server sees at most that many concurrent generations from this process. Each
// process has its own Limiter: several worker processes against one model server add up.
type Limiter struct {
	slots     chan struct{}
	waiting   atomic.Int64
	throttled atomic.Int64
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
func (l *Limiter) Client(c *http.Client) *http.Client { return l.CountingClient(c, nil) }

// CountingClient is Client that also adds to waits each time one of its requests waits on
// an overloaded server (nil: counts nothing), so a run can say that it waited.
func (l *Limiter) CountingClient(c *http.Client, waits *atomic.Int64) *http.Client {
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
	cp.Transport = &limitedTransport{l: l, next: next, waits: waits}
	return cp
}

type limitedTransport struct {
	l     *Limiter
	next  http.RoundTripper
	waits *atomic.Int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	waits := waitReporterFrom(req.Context())
	select {
	case t.l.slots <- struct{}{}:
	default:
		// Every slot is taken: the run waits for the model before its request is even sent.
		waits.report(ModelWait{Queued: true})
		t.l.waiting.Add(1)
		select {
		case t.l.slots <- struct{}{}:
			t.l.waiting.Add(-1)
			waits.report(ModelWait{})
		case <-req.Context().Done():
			t.l.waiting.Add(-1)
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, req.Context().Err()
		}
	}
	resp, err := t.backPressure(req)
	if err != nil {
		<-t.l.slots
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { <-t.l.slots }}
	return resp, nil
}

// maxBackPressureWait bounds how long one request waits, in all, on a server that answers
// 429 or 503 before the answer is passed on (to Run's own retries, which may then end the
// run with llm_query_error).
const maxBackPressureWait = 15 * time.Minute

// backPressure sends req, and while the server answers 429 or 503 (overloaded: a batching
// server with a full queue), waits as its Retry-After says (else 1 s, doubling to
// maxRetryDelay) and sends it again, holding the request's slot meanwhile so that the
// process sends less, not more. So an overloaded server slows attempts down instead of
// failing them; the wait is bounded by maxBackPressureWait and by the request's context.
func (t *limitedTransport) backPressure(req *http.Request) (*http.Response, error) {
	var waited time.Duration
	backoff := time.Second
	for {
		resp, err := t.next.RoundTrip(req)
		if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) || req.GetBody == nil {
			return resp, err
		}
		d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if !ok {
			d, backoff = backoff, min(2*backoff, maxRetryDelay)
		}
		if waited+d > maxBackPressureWait {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		t.l.throttled.Add(1)
		if t.waits != nil {
			t.waits.Add(1)
		}
		waitReporterFrom(req.Context()).report(ModelWait{Status: resp.StatusCode, RetryIn: d})
		if err := fault.Wait(req.Context(), d); err != nil {
			return nil, err
		}
		waited += d
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = body
	}
}

// Throttled is how many times a request of this Limiter waited on an overloaded server.
func (l *Limiter) Throttled() int {
	if l == nil {
		return 0
	}
	return int(l.throttled.Load())
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
