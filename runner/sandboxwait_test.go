package runner_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// holdFirst holds the first model request until release is closed (or the request ends).
type holdFirst struct {
	release <-chan struct{}
	once    *sync.Once
}

func (h holdFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		select {
		case <-h.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRunReportsSandboxWaitsAndTestStarts: with one sandbox slot (FROGNANO_MAX_SANDBOXES=1)
// the tests-before sandbox must wait while the agent's sandbox holds the slot; the run tells
// Spec.OnSandboxWait so (for the tests before, 1 of 1 in use), and tells the end of every wait.
// The model's first answer is held until the wait was told, so the wait is certain. Both test
// runs are told to Spec.OnTestsStart once, and the run still ends verified.
func TestRunReportsSandboxWaitsAndTestStarts(t *testing.T) {
	t.Parallel()
	b := setupOwned(t, 1, env.Config{}, checkout(t, "pyaverage"), "e2e-pyaverage.json")
	waited := make(chan struct{})
	var mu sync.Mutex
	var waits []sandbox.SlotWait
	var started []bool
	var waitedOnce sync.Once
	b.spec.Observer = waitsObserver{
		sandbox: func(k int, w sandbox.SlotWait) {
			mu.Lock()
			defer mu.Unlock()
			if k != 1 {
				t.Errorf("a sandbox wait told for attempt %d of a plain run", k)
			}
			waits = append(waits, w)
			if w.Purpose == "tests-before" {
				waitedOnce.Do(func() { close(waited) })
			}
		},
		tests: func(k int, after bool) {
			mu.Lock()
			defer mu.Unlock()
			if k != 1 {
				t.Errorf("tests start told for attempt %d of a plain run", k)
			}
			started = append(started, after)
		},
	}
	base := b.opt.Leaf
	b.opt.Leaf = func(k int, c leaf.Config) leaf.Config {
		c = base(k, c)
		c.HTTPClient = &http.Client{Transport: holdFirst{release: waited, once: &sync.Once{}}}
		return c
	}
	res, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestsBefore == nil || res.TestsBefore.Error != "" || res.TestsAfter == nil || res.TestsAfter.Error != "" {
		t.Fatalf("the run was not verified: before %+v, after %+v", res.TestsBefore, res.TestsAfter)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) == 0 || waits[0] != (sandbox.SlotWait{Purpose: "tests-before", InUse: 1, Cap: 1}) {
		t.Errorf("waits told %+v, want the tests before's first (1 of 1 in use)", waits)
	}
	// Every wait told is ended: for each sandbox (purpose), a wait and its end alternate, and
	// the last one told is an end.
	open := map[string]bool{}
	for _, w := range waits {
		if open[w.Purpose] == w.Waiting() {
			t.Errorf("waits told %+v: a wait and its end do not alternate for %s", waits, w.Purpose)
		}
		open[w.Purpose] = w.Waiting()
	}
	for purpose, still := range open {
		if still {
			t.Errorf("waits told %+v: the wait of %s never ended", waits, purpose)
		}
	}
	if len(started) != 2 || started[0] == started[1] {
		t.Errorf("tests starts told %v, want the tests before and after once each", started)
	}
	if left := b.containers(t); len(left) != 0 {
		t.Errorf("%d container(s) left after the run", len(left))
	}
}

// waitsObserver observes sandbox waits and test starts.
type waitsObserver struct {
	runner.NoObserver
	sandbox func(int, sandbox.SlotWait)
	tests   func(int, bool)
}

func (o waitsObserver) SandboxWait(k int, w sandbox.SlotWait) { o.sandbox(k, w) }
func (o waitsObserver) TestsStart(k int, after bool)          { o.tests(k, after) }
