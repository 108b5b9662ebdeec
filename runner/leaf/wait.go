package leaf

import (
	"context"
	"fmt"
	"math"
	"net/http/httptrace"
	"sync"
	"time"
)

// DefaultSlowAfter is Config.SlowAfter's default: a request that has had no answer for this
// long is reported as waiting for the model server (a batching server under load, a long
// generation). It only informs; RequestTimeout is what ends a request.
const DefaultSlowAfter = 30 * time.Second

// ModelWait is what a run is waiting for at the model server, as Config.OnWait reports it.
// The zero value means it waits for nothing: requests flow again.
type ModelWait struct {
	// Status is the HTTP status of the answer being waited out (429, 503, another 5xx, 408,
	// 409); 0 when the server did not answer.
	Status int
	// Unreachable: the request failed without an answer (connection refused or reset, a body
	// cut short) and is sent again after RetryIn.
	Unreachable bool
	// RetryIn is how long until the request is sent again (Status or Unreachable).
	RetryIn time.Duration
	// Slow is how long a request that was sent has had no answer (past Config.SlowAfter).
	Slow time.Duration
	// Queued: every model slot of this process is taken (FROGNANO_MODEL_CONCURRENCY, the
	// Limiter), and the request waits for one before it is sent.
	Queued bool
}

// Waiting reports whether w is a wait (not the zero value).
func (w ModelWait) Waiting() bool { return w != ModelWait{} }

// String says what is waited for in a few words ("429, retrying in 12 s"; "" for the zero
// value). It holds no text from the server.
func (w ModelWait) String() string {
	secs := func(d time.Duration) int64 { return max(1, int64(math.Ceil(d.Seconds()))) }
	switch {
	case w.Status != 0:
		return fmt.Sprintf("%d, retrying in %d s", w.Status, secs(w.RetryIn))
	case w.Unreachable:
		return fmt.Sprintf("no connection, retrying in %d s", secs(w.RetryIn))
	case w.Slow > 0:
		return fmt.Sprintf("no answer for %d s", int64(w.Slow/time.Second))
	case w.Queued:
		return "every model request slot of this worker is taken (FROGNANO_MODEL_CONCURRENCY)"
	}
	return ""
}

// waitReporter carries Config.OnWait for one model turn (complete), through the request's
// context to the Limiter's transport, which waits out 429 and 503 itself. It reports a
// clearing zero ModelWait only after a wait was reported, and watches for a slow answer.
type waitReporter struct {
	fn        func(ModelWait)
	slowAfter time.Duration

	mu      sync.Mutex
	waiting bool
	slow    *time.Timer
	gen     int // which arming of the slow timer is current; an older one's firing is ignored
}

type waitKey struct{}

func newWaitReporter(fn func(ModelWait), slowAfter time.Duration) *waitReporter {
	if fn == nil {
		return nil
	}
	return &waitReporter{fn: fn, slowAfter: slowAfter}
}

func withWaitReporter(ctx context.Context, r *waitReporter) context.Context {
	if r == nil {
		return ctx
	}
	ctx = context.WithValue(ctx, waitKey{}, r)
	// The slow watch starts when the request has been written, so that a wait for a slot of
	// the Limiter (reported as Queued) is not taken for a slow server.
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { r.armSlow() },
	})
}

func waitReporterFrom(ctx context.Context) *waitReporter {
	r, _ := ctx.Value(waitKey{}).(*waitReporter)
	return r
}

// report tells the callback about w; a zero w is passed on only when a wait was reported.
// Any report but a slow one ends the slow watch: an answer came.
func (r *waitReporter) report(w ModelWait) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disarmLocked()
	r.emitLocked(w)
}

func (r *waitReporter) emitLocked(w ModelWait) {
	if !w.Waiting() && !r.waiting {
		return
	}
	r.waiting = w.Waiting()
	r.fn(w)
}

func (r *waitReporter) armSlow() {
	if r == nil || r.slowAfter <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disarmLocked()
	gen, start := r.gen, time.Now()
	r.slow = time.AfterFunc(r.slowAfter, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.gen == gen {
			r.emitLocked(ModelWait{Slow: time.Since(start)})
		}
	})
}

// disarm ends the slow watch: the request has its answer (a slow report stands until the
// turn's next report, or its end, clears it).
func (r *waitReporter) disarm() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disarmLocked()
}

func (r *waitReporter) disarmLocked() {
	r.gen++
	if r.slow != nil {
		r.slow.Stop()
		r.slow = nil
	}
}
