package leaf

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// waitLog collects what OnWait reports.
type waitLog struct {
	mu   sync.Mutex
	got  []ModelWait
	seen chan ModelWait // every report, for tests that wait on one
}

func newWaitLog() *waitLog { return &waitLog{seen: make(chan ModelWait, 64)} }

func (l *waitLog) add(w ModelWait) {
	l.mu.Lock()
	l.got = append(l.got, w)
	l.mu.Unlock()
	l.seen <- w
}

func (l *waitLog) all() []ModelWait {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// TestOnWaitReportsRetryAndClears: a 429 with Retry-After that Run's own retry waits out is
// reported with its status and delay, then cleared once the answer came.
func TestOnWaitReportsRetryAndClears(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "retry-429.json"))
	log := newWaitLog()
	b.cfg.OnWait = log.add
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	want := []ModelWait{{Status: 429, RetryIn: 2 * time.Second}, {}}
	if got := log.all(); !slices.Equal(got, want) {
		t.Errorf("OnWait got %+v, want %+v", got, want)
	}
	if s := want[0].String(); s != "429, retrying in 2 s" {
		t.Errorf("String() = %q", s)
	}
}

// TestOnWaitThroughTheLimiter: with a Limiter, which waits out 503 and 429 itself (Run never
// sees them), the waits are reported all the same, and cleared when the answer came.
func TestOnWaitThroughTheLimiter(t *testing.T) {
	t.Parallel()
	s := leaftest.LoadModel(t, "retry-429.json")
	s.Turns[0].RetryAfter = "0.01"
	busy := s.Turns[0]
	busy.Status = http.StatusServiceUnavailable
	s.Turns = append([]leaftest.Turn{busy}, s.Turns...)
	b := setup(t, s)
	b.cfg.HTTPClient = NewLimiter(2).Client(nil)
	log := newWaitLog()
	b.cfg.OnWait = log.add
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	want := []ModelWait{{Status: 503, RetryIn: 10 * time.Millisecond}, {Status: 429, RetryIn: 10 * time.Millisecond}, {}}
	if got := log.all(); !slices.Equal(got, want) {
		t.Errorf("OnWait got %+v, want %+v", got, want)
	}
	if w := b.Waits(); len(w) != 0 {
		t.Errorf("Run itself retried (%v); the Limiter should have waited", w)
	}
}

// TestOnWaitSlowAndQueued: a request with no answer past SlowAfter is reported slow (the
// server answers only once that report was made, so nothing here depends on timing), and a
// second run whose Limiter slot is taken by the first is reported queued until it gets one.
func TestOnWaitSlowAndQueued(t *testing.T) {
	t.Parallel()
	slowSeen := make(chan struct{})
	released := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.Contains(r.Header.Get("X-Test-Run"), "first") {
			select {
			case <-slowSeen:
			case <-time.After(time.Minute):
				t.Error("the slow request was never reported")
			}
		}
		once.Do(func() { close(released) })
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	lim := NewLimiter(1)
	cfgFor := func(name string, log *waitLog) Config {
		c := DefaultConfig()
		c.BaseURL = srv.URL
		c.SlowAfter = time.Millisecond
		c.OnWait = log.add
		c.HTTPClient = lim.Client(&http.Client{Transport: headerTransport{name}})
		return c
	}
	first, second := newWaitLog(), newWaitLog()
	done := make(chan *Result, 1)
	go func() { done <- Run(context.Background(), cfgFor("first", first), "task", &fakeTools{}, nil) }()
	if w := <-first.seen; w.Slow <= 0 {
		t.Fatalf("first report = %+v, want a slow one", w)
	}
	// The first request holds the Limiter's only slot until it is answered.
	secondDone := make(chan *Result, 1)
	go func() { secondDone <- Run(context.Background(), cfgFor("second", second), "task", &fakeTools{}, nil) }()
	if w := <-second.seen; !w.Queued {
		t.Fatalf("second run's first report = %+v, want queued", w)
	}
	close(slowSeen)
	for _, r := range []*Result{<-done, <-secondDone} {
		if r.ExitReason != ExitAgent {
			t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
		}
	}
	<-released
	if got := first.all(); len(got) != 2 || got[1].Waiting() {
		t.Errorf("first run's reports = %+v, want slow then cleared", got)
	}
	got := second.all()
	if len(got) < 2 || got[len(got)-1].Waiting() {
		t.Errorf("second run's reports = %+v, want queued then cleared", got)
	}
}

// headerTransport names the run in a header, so the test server knows which one asks.
type headerTransport struct{ name string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Run", h.name)
	return http.DefaultTransport.RoundTrip(r)
}

func TestModelWaitString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		w    ModelWait
		want string
	}{
		{ModelWait{}, ""},
		{ModelWait{Status: 503, RetryIn: 1500 * time.Millisecond}, "503, retrying in 2 s"},
		{ModelWait{Status: 429, RetryIn: time.Millisecond}, "429, retrying in 1 s"},
		{ModelWait{Unreachable: true, RetryIn: 4 * time.Second}, "no connection, retrying in 4 s"},
		{ModelWait{Slow: 31 * time.Second}, "no answer for 31 s"},
		{ModelWait{Queued: true}, "every model request slot of this worker is taken (FROGNANO_MODEL_CONCURRENCY)"},
	} {
		if got := tt.w.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.w, got, tt.want)
		}
	}
}
