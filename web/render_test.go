package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

func TestInert(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("a", 36)
	tests := []struct{ name, in, want string }{
		{"Plain", "ok\n\tdone", "ok\n\tdone"},
		{"BidiOverride", "if x \u202e} else {", "if x [U+202E]} else {"},
		{"Isolates", "a\u2066b\u2069", "a[U+2066]b[U+2069]"},
		{"ZeroWidth", "ad\u200bmin", "ad[U+200B]min"},
		{"Escape", "\x1b[31mred", "[U+001B][31mred"},
		{"InvalidUTF8", "a\xffb", "a\uFFFDb"},
		{"Token", "token " + token, "token " + githubapp.Redacted},
		{"MarkupIsLeftToTheTemplate", "</details><script>", "</details><script>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := inert(tt.in); got != tt.want {
				t.Errorf("inert(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// hostile is model and sandbox output that tries to break out of the page.
const hostile = "</pre></details></li></ol><script>document.title='pwned'</script>" +
	"<img src=x onerror=\"document.body.dataset.pwned=1\"><b id=\"injected\">x</b> \u202egnp.exe"

func TestHostileTextStaysInert(t *testing.T) {
	t.Parallel()
	b := setup(t)
	token := "ghs_" + strings.Repeat("Z", 40)
	long := strings.Repeat("line of output\n", 200) + hostile
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, Patch: samplePatch + "+" + hostile + "\n",
		PRURL: "javascript:alert(1)", Steps: 2})
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 3})
	b.event(t, id, run.EventAgent, run.AgentEvent{Task: "Fix it " + hostile + " " + token})
	b.event(t, id, run.EventStep, run.StepEvent{Attempt: 1, Index: 0, Content: hostile,
		Calls:        []run.CallEvent{{Tool: "Bash<script>", Arguments: `{"command":"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`}},
		Observations: []run.ObservedText{{Tool: "Bash", Text: hostile}, {Tool: "Read", Text: long}}})
	b.event(t, id, run.EventTests, run.TestsEvent{Before: &run.TestsRun{Command: hostile, Tail: hostile},
		After: &run.TestsRun{Command: "go test"}, PerTest: true, Tests: []run.TestRow{{Name: hostile, Before: "fail", After: "pass", Change: "fixed"}}})

	resp := b.get(t, "/runs/"+itoa(id), "alice")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	for _, bad := range []string{"<script>document", "<img src=x", `<b id="injected">`, "\u202e", token, `href="javascript:`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;document.title=", "&lt;/details&gt;", "[U&#43;202E]gnp.exe", githubapp.Redacted} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The markup frognano wrote is balanced whatever the text held: a </details> in an
	// observation did not close the page's own.
	if o, c := strings.Count(page, "<details"), strings.Count(page, "</details>"); o != c || o < 2 {
		t.Errorf("%d <details> against %d </details>", o, c)
	}
	// The only script is the page's own (none for a finished run), and the policy forbids others.
	if strings.Contains(page, "<script") {
		t.Error("a finished run's page carries a script")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", resp.Header)
	}
	// The viewer's token is never on the page.
	if strings.Contains(page, "user-token-of-") {
		t.Error("the viewer's token is on the page")
	}
}

func TestStepFragmentMatchesPage(t *testing.T) {
	t.Parallel()
	p, err := New(Config{Runs: nil, Auth: &testAuth{}})
	if err == nil || p != nil {
		t.Fatal("New accepted a config without a run.Reader")
	}
	tmpl, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	pg := &Pages{tmpl: tmpl}
	html, err := pg.fragment("step", stepView{N: 3, Calls: []run.CallEvent{{Tool: "Bash", Arguments: `{"command":"ls"}`}},
		Observations: []run.ObservedText{{Tool: "Bash", Text: hostile}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html, `data-n="3"`) || !strings.Contains(html, "&#34;command&#34;: &#34;ls&#34;") ||
		strings.Contains(html, "<script>") || strings.Contains(html, "\u202e") {
		t.Errorf("fragment = %s", html)
	}
}

// TestTimelineShowsWaitsAndTestStarts: a running run's page shows in its timeline, in order,
// that a sandbox waited for a free slot and that the tests before and after started (the
// attempt named in a run of several), with the escaped text the worker wrote.
func TestTimelineShowsWaitsAndTestStarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 3})
	b.event(t, id, run.EventAgent, run.AgentEvent{Task: "Pages rounds down"})
	b.event(t, id, run.EventSandboxWait, run.SandboxWaitEvent{Attempt: 2, For: "the agent", InUse: 2, Cap: 2})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go"))
	b.event(t, id, run.EventTestsStart, run.TestsStartEvent{Attempt: 1})
	b.event(t, id, run.EventSandboxWait, run.SandboxWaitEvent{For: "the tests after <b>", InUse: 1, Cap: 1})
	b.event(t, id, run.EventTestsStart, run.TestsStartEvent{Attempt: 2, After: true})

	resp := b.get(t, "/runs/"+itoa(id), "alice")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	start := strings.Index(page, `id="timeline"`)
	if start < 0 {
		t.Fatalf("no timeline on the page:\n%s", page)
	}
	timeline := page[start:]
	timeline = timeline[:strings.Index(timeline, "</ol>")]
	at := 0
	for _, want := range []string{
		"setup: sandbox and environment, then the agent",
		"attempt 2: waiting for a free sandbox for the agent (2 of 2 in use on this worker)",
		"running the tests before...",
		"> waiting for a free sandbox for the tests after &lt;b&gt; (1 of 1 in use on this worker)<",
		"attempt 2: running the tests after...",
	} {
		i := strings.Index(timeline[at:], want)
		if i < 0 {
			t.Fatalf("the timeline lacks %q after what came before it:\n%s", want, timeline)
		}
		at += i + len(want)
	}
}

// TestWaitingRunPage: a run that waits for its pull request's active run is listed under the
// state filter waiting, and its page says what it waits for and follows it live; once it was
// promoted and checked, its timeline says it waited, then was queued and checked, in order.
func TestWaitingRunPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 77, State: run.StateWaiting})
	other := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	list, _ := io.ReadAll(b.get(t, "/runs?state=waiting", "alice").Body)
	if !strings.Contains(string(list), `data-run="`+itoa(id)+`"`) || strings.Contains(string(list), `data-run="`+itoa(other)+`"`) {
		t.Errorf("the waiting filter lists:\n%s", list)
	}
	timeline := func() string {
		t.Helper()
		resp := b.get(t, "/runs/"+itoa(id), "alice")
		body, _ := io.ReadAll(resp.Body)
		page := string(body)
		start := strings.Index(page, `id="timeline"`)
		if resp.StatusCode != http.StatusOK || start < 0 {
			t.Fatalf("status %d, page:\n%s", resp.StatusCode, page)
		}
		if live := strings.Contains(page, `id="live"`); !live {
			t.Errorf("the page of an unfinished run does not follow it")
		}
		return page[start : start+strings.Index(page[start:], "</ol>")]
	}
	if tl := timeline(); !strings.Contains(tl, "waiting for the active run of this pull request to end") || strings.Contains(tl, "queued") {
		t.Errorf("timeline:\n%s", tl)
	}
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'running', promoted_at = now() + interval '1 second',
		checked_at = now() + interval '2 seconds' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	tl, at := timeline(), 0
	for _, want := range []string{"waited for the active run of this pull request", "queued", "checked: it may go ahead"} {
		i := strings.Index(tl[at:], want)
		if i < 0 {
			t.Fatalf("the timeline lacks %q after what came before it:\n%s", want, tl)
		}
		at += i + len(want)
	}

	// A request cancelled while it waited (a stop) was never queued, and its page says so.
	stopped := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 78, State: run.StateCancelled})
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET kind = $2 WHERE id = $1`, stopped, run.KindFollowUp); err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(b.get(t, "/runs/"+itoa(stopped), "alice").Body)
	start := strings.Index(string(page), `id="timeline"`)
	if start < 0 {
		t.Fatalf("no timeline:\n%s", page)
	}
	tl = string(page)[start : start+strings.Index(string(page)[start:], "</ol>")]
	if !strings.Contains(tl, "waited for the active run of this pull request") || strings.Contains(tl, "queued") {
		t.Errorf("the timeline of a request cancelled while it waited:\n%s", tl)
	}
}
