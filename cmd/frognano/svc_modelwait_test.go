package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServiceStatusSaysItWaitsForTheModel: a model server that answers the first chat request
// with 429 and Retry-After slows the run down without failing it, and the running status
// comment says so ("waiting for the model server: 429, retrying in 1 s"). The server holds
// the retry until the fake GitHub has seen that edit, so nothing depends on timing; once
// requests flow the comment says it no more, and the run publishes its PR.
func TestServiceStatusSaysItWaitsForTheModel(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	const waitLine = "⏳ Waiting for the model server: 429, retrying in 1 s."
	busy := svcGateModel(t, e.model.URL, 2, "the status comment saying the run waits for the model", func() (bool, string) {
		body := e.statusBody()
		return strings.Contains(body, waitLine), body
	}, func(n int64, w http.ResponseWriter, r *http.Request) bool {
		if n != 1 {
			return false
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Too many requests","type":"rate_limit"}}`)
		return true
	})
	e.env["FROGNANO_MODEL_URL"] = busy.URL
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "succeeded")
	if n := busy.Chats.Load(); n < 2 {
		t.Fatalf("%d chat requests, want the 429 and its retry", n)
	}
	var c = e.onlyComment()
	svcWait(t, 30*time.Second, "the final status comment", func() (bool, string) {
		c = e.onlyComment()
		return strings.Contains(c.Body, "opened a draft pull request"), c.Body
	})
	bodies := append(append([]string(nil), c.History...), c.Body)
	first := -1
	for i, b := range bodies {
		if strings.Contains(b, waitLine) {
			first = i
			if !strings.Contains(b, "is working on this issue") {
				t.Errorf("a comment that is not the running one says the run waits:\n%s", b)
			}
			break
		}
	}
	if first < 0 {
		t.Fatalf("no edit of the status comment said the run waits for the model: %q", bodies)
	}
	// Once cleared, the wait never shows again: the 429 was waited out.
	cleared := false
	for _, b := range bodies[first:] {
		has := strings.Contains(b, "Waiting for the model server")
		if cleared && has {
			t.Errorf("the wait came back after requests flowed:\n%s", b)
		}
		cleared = cleared || !has
	}
	if strings.Contains(c.Body, "Waiting for the model server") {
		t.Errorf("the final comment still says the run waits:\n%s", c.Body)
	}
	if len(e.gh.PRs(e.repo)) != 1 {
		t.Errorf("the run published %d PRs, want 1", len(e.gh.PRs(e.repo)))
	}
	e.waitNoContainers(30 * time.Second)
}

// statusBody is the issue's status comment as the fake GitHub holds it now ("" before it
// is posted).
func (e *svcEnv) statusBody() string {
	cs := e.gh.Comments(e.repo, svcIssue)
	if len(cs) == 0 {
		return ""
	}
	return cs[0].Body
}
