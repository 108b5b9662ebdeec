package web

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
)

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func TestAccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, Patch: samplePatch})
	missing := id + 1000
	tests := []struct {
		name, path, login string
		status            int
		location          string
	}{
		{"PageWithoutSession", "/runs/" + itoa(id), "", http.StatusSeeOther, "/login?next=%2Fruns%2F" + itoa(id)},
		{"ListWithoutSession", "/runs?repo=octo%2Fpager", "", http.StatusSeeOther, "/login?next=%2Fruns%3Frepo%3Docto%252Fpager"},
		{"EventsWithoutSession", "/runs/" + itoa(id) + "/events", "", http.StatusUnauthorized, ""},
		{"UnknownSession", "/runs/" + itoa(id), "mallory", http.StatusSeeOther, "/login?next=%2Fruns%2F" + itoa(id)},
		{"CannotRead", "/runs/" + itoa(id), "bob", http.StatusNotFound, ""},
		{"CannotReadEvents", "/runs/" + itoa(id) + "/events", "bob", http.StatusNotFound, ""},
		{"Missing", "/runs/" + itoa(missing), "alice", http.StatusNotFound, ""},
		{"Reader", "/runs/" + itoa(id), "alice", http.StatusOK, ""},
		{"BadState", "/runs?state=exploded", "alice", http.StatusBadRequest, ""},
		{"BadRepository", "/runs?repo=a/b/c", "alice", http.StatusBadRequest, ""},
	}
	bodies := map[string]string{}
	for _, tt := range tests {
		resp := b.get(t, tt.path, tt.login)
		body, _ := io.ReadAll(resp.Body)
		bodies[tt.name] = string(body)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
		if tt.location != "" && resp.Header.Get("Location") != tt.location {
			t.Errorf("%s: Location %q, want %q", tt.name, resp.Header.Get("Location"), tt.location)
		}
	}
	// A run bob may not read is answered exactly like one that does not exist.
	if bodies["CannotRead"] != bodies["Missing"] {
		t.Error("the refusal differs from the answer for a missing run: it tells that the run exists")
	}
	if !strings.Contains(bodies["Reader"], "Pages(n int)") {
		t.Error("the reader's page lacks the patch")
	}
	// Only GET: the pages change nothing.
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/runs/"+itoa(id), nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "alice"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
}

func TestListShowsOnlyReadableRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok1 := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded})
	ok2 := b.run(t, seedRun{Owner: "octo", Repo: "other", State: run.StateFailed})
	hidden := b.run(t, seedRun{Owner: "secret", Repo: "vault", State: run.StateSucceeded})
	resp := b.get(t, "/runs", "alice")
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	for _, id := range []int64{ok1, ok2} {
		if !strings.Contains(page, `data-run="`+itoa(id)+`"`) {
			t.Errorf("run %d is not listed", id)
		}
	}
	if strings.Contains(page, `data-run="`+itoa(hidden)+`"`) || strings.Contains(page, "vault") {
		t.Error("a run of a repository alice cannot read is listed")
	}
	if b.auth.asked != 3 {
		t.Errorf("CanRead asked %d times, want once per repository (3)", b.auth.asked)
	}
}

// TestEventStream follows a running run's stream: the step appended after the client
// connected arrives, and the stream ends once the run is terminal.
func TestEventStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 3})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))

	resp := b.stream(t, id, "alice")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	r := bufio.NewReader(resp.Body)
	next := func() (name, data string) {
		t.Helper()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			case line == "" && name != "":
				return name, data
			}
		}
	}
	var names []string
	for len(names) < 3 { // state, timeline (the attempt), step 1
		n, _ := next()
		names = append(names, n)
	}
	if strings.Join(names, ",") != "state,timeline,step" {
		t.Fatalf("first events %v", names)
	}
	b.event(t, id, run.EventStep, step(1, "cat pager.go", "package pager"))
	n, data := next()
	if n != "step" || !strings.Contains(data, `data-n=\"2\"`) || !strings.Contains(data, "cat pager.go") {
		t.Fatalf("event %s %s, want step 2", n, data)
	}
	// The tests before wait for a sandbox, then start: each is a timeline entry, live.
	b.event(t, id, run.EventSandboxWait, run.SandboxWaitEvent{For: "the tests before", InUse: 2, Cap: 2})
	b.event(t, id, run.EventTestsStart, run.TestsStartEvent{})
	for _, want := range []string{"waiting for a free sandbox for the tests before (2 of 2 in use on this worker)", "running the tests before..."} {
		if n, data = next(); n != "timeline" || !strings.Contains(data, want) {
			t.Fatalf("event %s %s, want the timeline entry %q", n, data, want)
		}
	}
	b.finish(t, id, run.StateSucceeded, samplePatch, "https://github.example/octo/pager/pull/8")
	for n != "end" {
		n, data = next()
	}
	if data != run.StateSucceeded {
		t.Errorf("end data %q", data)
	}
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Errorf("the stream goes on after end: %v", err)
	}
}

// TestEventStreamEndsWhenAccessIsRemoved: a person removed from the repository while they
// watch a running run stops receiving its events: the stream ends, without an end event.
func TestEventStreamEndsWhenAccessIsRemoved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.auth.allow("carol", "octo/pager")
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))
	r := untilStep(t, b.stream(t, id, "carol").Body)
	b.auth.revoke("carol", "octo/pager")
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	if strings.Contains(string(rest), "event: end") {
		t.Errorf("the stream ended as if the run had: %q", rest)
	}
}

// TestCloseEndsEventStreams: a server shutting down (Close) ends the open streams, so its
// Shutdown need not wait for them.
func TestCloseEndsEventStreams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))
	r := untilStep(t, b.stream(t, id, "alice").Body)
	b.pages.Close()
	if _, err := io.ReadAll(r); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
}

// TestListFilterTellsNothingOfUnreadableRepositories: for a person who cannot read a
// repository, /runs?repo= answers the same, after the same single access check, whether
// frognano ran on it or not.
func TestListFilterTellsNothingOfUnreadableRepositories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded})
	answer := func(repo string) (string, int) {
		b.auth.mu.Lock()
		before := b.auth.asked
		b.auth.mu.Unlock()
		resp := b.get(t, "/runs?repo="+repo, "bob")
		body, _ := io.ReadAll(resp.Body)
		b.auth.mu.Lock()
		defer b.auth.mu.Unlock()
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.ReplaceAll(string(body), repo, "REPO")), b.auth.asked - before
	}
	with, n1 := answer("octo/pager")
	without, n2 := answer("octo/unused")
	if with != without {
		t.Error("the answer for a repository with runs differs from one without")
	}
	if n1 != 1 || n2 != 1 {
		t.Errorf("access checks: %d with runs, %d without, want 1 each", n1, n2)
	}
}

// TestEventStreamsAreBounded: past MaxStreams open streams, another is refused with 503 (the
// page reloads later to try again), so open pages cannot make the database poll without end.
func TestEventStreamsAreBounded(t *testing.T) {
	t.Parallel()
	b := setupWith(t, func(c *Config) { c.MaxStreams = 1 })
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))
	first := b.stream(t, id, "alice")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	if second := b.get(t, "/runs/"+itoa(id)+"/events", "alice"); second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second stream: %d, want 503", second.StatusCode)
	}
	// The first ends with its run; then a stream may open again.
	b.finish(t, id, run.StateSucceeded, samplePatch, "")
	if _, err := io.ReadAll(first.Body); err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	if again := b.get(t, "/runs/"+itoa(id)+"/events", "alice"); again.StatusCode != http.StatusOK {
		t.Errorf("a stream after the first ended: %d, want 200", again.StatusCode)
	}
}

// TestEventStreamsPerViewer: one person cannot hold every stream: past MaxStreamsPerViewer
// their next is refused with 429, while another person still gets one.
func TestEventStreamsPerViewer(t *testing.T) {
	t.Parallel()
	b := setupWith(t, func(c *Config) { c.MaxStreams = 3; c.MaxStreamsPerViewer = 1 })
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))
	first := b.stream(t, id, "alice")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("alice's first stream: %d", first.StatusCode)
	}
	if second := b.get(t, "/runs/"+itoa(id)+"/events", "alice"); second.StatusCode != http.StatusTooManyRequests {
		t.Errorf("alice's second stream: %d, want 429", second.StatusCode)
	}
	own := b.run(t, seedRun{Owner: "bob", Repo: "own", State: run.StateRunning})
	b.event(t, own, run.EventStep, step(0, "ls", "own.go"))
	if other := b.stream(t, own, "bob"); other.StatusCode != http.StatusOK {
		t.Errorf("bob's stream while alice holds hers: %d, want 200", other.StatusCode)
	}
}
