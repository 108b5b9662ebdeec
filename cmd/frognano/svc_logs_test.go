package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/frognano/frognano/migrations/dbtest"
)

// TestServiceLogsAreJSONOnStderr runs a real `frognano serve` process and reads everything it
// writes to stderr while its database goes away and comes back, and while it works a run: every
// line must be one JSON object (the README promises JSON logs on stderr; River's own lines once
// came out as key=value text in the same stream). The outage is real for the service: its
// DATABASE_URL points at a TCP relay to the test's PostgreSQL that drops every connection and
// refuses new ones until the relay is restored.
func TestServiceLogsAreJSONOnStderr(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	_, bin := svcBinaries(t, true)
	relay := svcNewDBRelay(t)
	e.env["DATABASE_URL"] = relay.url(t, e.env["DATABASE_URL"])

	stderrLog := &svcBuffer{}
	child, stderr := svcChild(t, bin, e.env, io.Discard, "serve")
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = child.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("frognano serve's stderr:\n%s", svcTail(stderrLog.String(), 12000))
		}
	})
	p := &svcProc{addr: svcChildAddr(t, stderr, stderrLog)}
	ready := func() int {
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + p.addr + "/readyz")
		if err != nil {
			t.Fatalf("GET /readyz: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("/readyz before the outage = %d", code)
	}

	// 1. The outage: the service notices it (readiness) and River reports its failing fetches.
	before := len(svcLines(stderrLog.String()))
	relay.cut()
	if code := ready(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz during the outage = %d, want 503", code)
	}
	svcWait(t, time.Minute, "River to log an error during the outage", func() (bool, string) {
		lines := svcLines(stderrLog.String())[before:]
		for _, l := range lines {
			if strings.Contains(l, "producer") && strings.Contains(strings.ToLower(l), "error") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d lines since the cut", len(lines))
	})
	outageLines := len(svcLines(stderrLog.String())) - before

	// 2. The database comes back; the service works a run end to end.
	relay.restore()
	svcWait(t, time.Minute, "/readyz after the outage", func() (bool, string) {
		code := ready()
		return code == http.StatusOK, fmt.Sprint(code)
	})
	// Whatever the agent achieves, the run goes through the clone, the sandboxes, the model and
	// the tests; what is checked here is what the service logs on the way.
	id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
	var row svcRunRow
	svcWait(t, svcRunWait, fmt.Sprintf("run %d to end", id), func() (bool, string) {
		row = e.run(id)
		return row.State != "queued" && row.State != "running", row.State
	})
	if row.Steps == 0 {
		t.Errorf("run %d ended %s (error %q) before the agent took a step", id, row.State, row.Error)
	}

	// 3. An orderly stop, so the shutdown's lines are in the stream too.
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("frognano serve exited with %v after SIGTERM", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("frognano serve did not stop within 2 minutes of SIGTERM")
	}

	lines := svcLines(stderrLog.String())
	river := 0
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("stderr line %d is not JSON (%v): %s", i+1, err, l)
			continue
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k].(string); !ok {
				t.Errorf("stderr line %d has no %s: %s", i+1, k, l)
			}
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "producer") || strings.Contains(msg, "River") {
			river++
		}
	}
	if river == 0 {
		t.Error("no line from River: its logs do not reach the service's stderr")
	}
	t.Logf("%d lines on stderr, %d during the outage, %d from River", len(lines), outageLines, river)
}

// svcLines splits a log into its lines (a last line without a newline is still written).
func svcLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// svcDBRelay forwards TCP connections on a loopback port to the test's PostgreSQL. cut drops
// every connection and refuses new ones (each is closed at once) until restore: a database
// outage as the service sees it, without touching the server that other tests share.
type svcDBRelay struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func svcNewDBRelay(t *testing.T) *svcDBRelay {
	t.Helper()
	u, err := url.Parse(dbtest.URL(t))
	if err != nil || u.Host == "" {
		t.Fatalf("TEST_DATABASE_URL is not a host URL the relay can forward to: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &svcDBRelay{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	go r.serve()
	t.Cleanup(func() {
		ln.Close()
		r.cut()
	})
	return r
}

// url is dsn with its host and port replaced by the relay's.
func (r *svcDBRelay) url(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = r.ln.Addr().String()
	return u.String()
}

func (r *svcDBRelay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.down {
			r.mu.Unlock()
			c.Close()
			continue
		}
		r.conns[c] = struct{}{}
		r.mu.Unlock()
		go r.pipe(c)
	}
}

func (r *svcDBRelay) pipe(c net.Conn) {
	defer r.forget(c)
	d, err := net.DialTimeout("tcp", r.target, 10*time.Second)
	if err != nil {
		return
	}
	r.mu.Lock()
	if r.down {
		r.mu.Unlock()
		d.Close()
		return
	}
	r.conns[d] = struct{}{}
	r.mu.Unlock()
	defer r.forget(d)
	done := make(chan struct{}, 2)
	go func() { io.Copy(d, c); done <- struct{}{} }()
	go func() { io.Copy(c, d); done <- struct{}{} }()
	<-done
}

func (r *svcDBRelay) forget(c net.Conn) {
	c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

func (r *svcDBRelay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = true
	for c := range r.conns {
		c.Close()
	}
}

func (r *svcDBRelay) restore() {
	r.mu.Lock()
	r.down = false
	r.mu.Unlock()
}
