package leaf

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLimiterBoundsRequestsInFlight: eight concurrent requests through two clients that share
// a Limiter of 2 never have more than 2 at the server at once, and all of them complete.
func TestLimiterBoundsRequestsInFlight(t *testing.T) {
	t.Parallel()
	var now, peak atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		now.Add(-1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	l := NewLimiter(2)
	clients := []*http.Client{l.Client(nil), l.Client(&http.Client{})}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := clients[i%2].Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}()
	}
	for l.Waiting() < 6 || now.Load() < 2 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("peak in flight = %d, want 2", p)
	}
	if NewLimiter(0) != nil || NewLimiter(0).Client(nil) != nil {
		t.Error("a zero limit must limit nothing")
	}
}

// TestLimiterWaitsOutAnOverloadedServer: a server that answers 503 and 429 with Retry-After
// more often than Run would retry slows the request down; the request still succeeds.
func TestLimiterWaitsOutAnOverloadedServer(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && string(body) != "the request" {
			t.Errorf("request %d body = %q", calls.Load()+1, body)
		}
		switch n := calls.Add(1); {
		case n <= 4:
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(http.StatusServiceUnavailable)
		case n <= 8:
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	l := NewLimiter(1)
	var waits atomic.Int64
	resp, err := l.CountingClient(nil, &waits).Post(srv.URL, "text/plain", strings.NewReader("the request"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" || calls.Load() != 9 || l.Throttled() != 8 || waits.Load() != 8 {
		t.Errorf("status %d %q after %d calls, throttled %d", resp.StatusCode, b, calls.Load(), l.Throttled())
	}
	// The slot came back: a second request goes through.
	if resp, err := l.Client(nil).Get(srv.URL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
}
