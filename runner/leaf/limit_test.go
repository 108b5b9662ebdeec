package leaf

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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
