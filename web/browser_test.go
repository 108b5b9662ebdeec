package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/web/webtest"
)

// browse runs actions in the browser and fails the test on an error.
func browse(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// signIn opens next as login through the test sign-in.
func (b *bundle) signIn(t *testing.T, ctx context.Context, login, next string) {
	t.Helper()
	browse(t, ctx, chromedp.Navigate(b.srv.URL+"/login?as="+url.QueryEscape(login)+"&next="+url.QueryEscape(next)))
}

func TestBrowserFinishedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := strings.Repeat("ok  \tgithub.com/octo/pager\t0.01s\n", 60)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, Patch: samplePatch,
		PRURL: "https://github.example/octo/pager/pull/8", ExitReason: "agent", Steps: 3})
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 3})
	b.event(t, id, run.EventAgent, run.AgentEvent{Task: "Pages rounds down\n\nPages(15) should be 2."})
	b.event(t, id, run.EventStep, step(0, "grep -n Pages pager.go", "1:func Pages(n int) int { return n / 10 }"))
	b.event(t, id, run.EventStep, step(1, "go test ./...", long))
	b.event(t, id, run.EventStep, step(2, "cat notes.txt", hostile))
	other := step(0, "ls -la", "total 8")
	other.Attempt = 2
	b.event(t, id, run.EventStep, other)
	b.event(t, id, run.EventTests, run.TestsEvent{
		Before: &run.TestsRun{Command: "go test ./...", ExitCode: 1, Passed: 4, Failed: 1},
		After:  &run.TestsRun{Command: "go test ./...", ExitCode: 0, Passed: 5}, PerTest: true,
		Tests: []run.TestRow{{Name: "pager/TestPagesRoundsUp", Before: "fail", After: "pass", Change: "fixed"},
			{Name: "pager/TestPagesZero", Before: "pass", After: "pass"}},
		Attempts: []run.AttemptRow{{K: 1, Chosen: true, ExitReason: "agent", Steps: 3, PatchBytes: 180},
			{K: 2, ExitReason: "max_steps", Steps: 1}},
		Why: "attempt 1 fixed the failing test and broke none"})
	b.event(t, id, run.EventEnd, run.EndEvent{State: run.StateSucceeded, ExitReason: "agent", PRURL: "https://github.example/octo/pager/pull/8"})

	ctx := webtest.Browser(t)
	b.signIn(t, ctx, "alice", "/runs/"+itoa(id))
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS("#diff")))
	webtest.Screenshot(t, ctx, "finished")

	if n := eval[int](t, ctx, `document.querySelectorAll('#g-1-1 .step').length`); n != 3 {
		t.Errorf("%d steps shown for attempt 1, want 3", n)
	}
	if got := webtest.Text(t, ctx, "#g-1-2"); !strings.Contains(got, "attempt 2") || !strings.Contains(got, "ls -la") {
		t.Errorf("attempt 2's steps: %q", got)
	}
	if got := webtest.Text(t, ctx, "#attempts"); !strings.Contains(got, "chosen") || !strings.Contains(got, "max_steps") {
		t.Errorf("attempts table: %q", got)
	}
	if got := webtest.Text(t, ctx, `#g-1-1 .step[data-n="1"] .args`); !strings.Contains(got, `"command": "grep -n Pages pager.go"`) {
		t.Errorf("step 1's arguments: %q", got)
	}
	if got := webtest.Text(t, ctx, `#g-1-1 .step[data-n="1"] .obs pre`); !strings.Contains(got, "return n / 10") {
		t.Errorf("step 1's observation: %q", got)
	}
	// The long observation is collapsed, its first line in the summary.
	if open := eval[bool](t, ctx, `document.querySelector('.step[data-n="2"] details.obs').open`); open {
		t.Error("the long observation is not collapsed")
	}
	if got := webtest.Text(t, ctx, `.step[data-n="2"] details.obs summary`); !strings.Contains(got, "60 lines") {
		t.Errorf("the collapsed observation's summary: %q", got)
	}
	if got := webtest.Text(t, ctx, "#diff"); !strings.Contains(got, "+func Pages(n int) int { return (n + 9) / 10 }") {
		t.Errorf("diff: %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#diff .add').textContent`); !strings.HasPrefix(got, "+func Pages") {
		t.Errorf("the added line is not marked: %q", got)
	}
	if got := webtest.Text(t, ctx, "#tests"); !strings.Contains(got, "pager/TestPagesRoundsUp") || !strings.Contains(got, "fixed") {
		t.Errorf("tests table: %q", got)
	}
	if got := webtest.Text(t, ctx, "#tests-summary"); !strings.Contains(got, "Passed\t4\t5") && !strings.Contains(got, "4") {
		t.Errorf("tests summary: %q", got)
	}
	if got := webtest.Text(t, ctx, "#timeline"); !strings.Contains(got, "published") || !strings.Contains(got, "4 agent steps") {
		t.Errorf("timeline: %q", got)
	}
	if got := webtest.Text(t, ctx, "#task"); !strings.Contains(got, "Pages(15) should be 2.") {
		t.Errorf("task: %q", got)
	}
	// The hostile observation is shown as text and did nothing.
	if got := webtest.Text(t, ctx, `.step[data-n="3"] .obs pre`); !strings.Contains(got, "<script>document.title='pwned'</script>") ||
		!strings.Contains(got, "[U+202E]gnp.exe") {
		t.Errorf("the hostile observation is not shown as text: %q", got)
	}
	if eval[bool](t, ctx, `document.getElementById('injected') !== null || document.body.dataset.pwned === '1' || document.title === 'pwned'`) {
		t.Error("the hostile observation changed the page")
	}
}

func TestBrowserLiveRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateRunning})
	b.event(t, id, run.EventAttempt, run.AttemptEvent{Attempt: 1, MaxAttempts: 3})
	b.event(t, id, run.EventAgent, run.AgentEvent{Task: "Pages rounds down"})
	b.event(t, id, run.EventStep, step(0, "ls", "pager.go\npager_test.go"))

	ctx := webtest.Browser(t)
	b.signIn(t, ctx, "alice", "/runs/"+itoa(id))
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#live`)), chromedp.WaitVisible(chromedp.CSS(`.step[data-n="1"]`)))
	webtest.Screenshot(t, ctx, "running-1")

	// The worker finishes another step: the page shows it without a reload.
	eval[bool](t, ctx, `window.sameDocument = true`)
	b.event(t, id, run.EventStep, step(1, "go test ./...", "--- FAIL: TestPagesRoundsUp"))
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS(`.step[data-n="2"]`)))
	if !eval[bool](t, ctx, `window.sameDocument === true`) {
		t.Error("the page reloaded to show the new step")
	}
	if got := webtest.Text(t, ctx, `.step[data-n="2"] .args`); !strings.Contains(got, "go test ./...") {
		t.Errorf("the new step's arguments: %q", got)
	}
	if got := webtest.Text(t, ctx, "#fact-steps"); got != "2" {
		t.Errorf("steps fact %q, want 2", got)
	}
	webtest.Screenshot(t, ctx, "running-2")

	// The tests after start: the timeline says so without a reload.
	b.event(t, id, run.EventTestsStart, run.TestsStartEvent{After: true})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('timeline').textContent.includes('running the tests after...')`)); err != nil {
		t.Fatalf("the timeline never said the tests after are running: %v", err)
	}
	if !eval[bool](t, ctx, `window.sameDocument === true`) {
		t.Error("the page reloaded to show the tests starting")
	}

	// The run ends: the page shows the whole finished run.
	b.event(t, id, run.EventTests, run.TestsEvent{Before: &run.TestsRun{Command: "go test ./...", ExitCode: 1, Failed: 1},
		After: &run.TestsRun{Command: "go test ./...", Passed: 1}})
	b.finish(t, id, run.StateSucceeded, samplePatch, "https://github.example/octo/pager/pull/8")
	b.event(t, id, run.EventEnd, run.EndEvent{State: run.StateSucceeded, PRURL: "https://github.example/octo/pager/pull/8"})
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS("#diff")), chromedp.WaitNotPresent(chromedp.CSS("#live")))
	if got := webtest.Text(t, ctx, "#state"); got != run.StateSucceeded {
		t.Errorf("state %q", got)
	}
	if got := webtest.Text(t, ctx, "#tests-summary"); !strings.Contains(got, "go test ./...") {
		t.Errorf("tests: %q", got)
	}
	webtest.Screenshot(t, ctx, "finished")
}

func TestBrowserRunsList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, PRURL: "https://github.example/octo/pager/pull/8"})
	failed := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 9, State: run.StateFailed, ExitReason: "max_steps"})
	other := b.run(t, seedRun{Owner: "octo", Repo: "other", State: run.StateFailed})
	hidden := b.run(t, seedRun{Owner: "secret", Repo: "vault", State: run.StateFailed})

	ctx := webtest.Browser(t)
	b.signIn(t, ctx, "alice", "/runs")
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS("#runs")))
	webtest.Screenshot(t, ctx, "all")
	rows := func() string {
		return eval[string](t, ctx, `Array.from(document.querySelectorAll('#runs tr.run')).map(r => r.dataset.run).join(',')`)
	}
	if got, want := rows(), itoa(other)+","+itoa(failed)+","+itoa(ok); got != want {
		t.Errorf("rows %s, want %s (not %d, of a repository alice cannot read)", got, want, hidden)
	}
	// Filter through the form, as a person would.
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name="repo"]`), "octo/pager"),
		chromedp.SetValue(chromedp.CSS(`select[name="state"]`), run.StateFailed))
	// RunResponse returns once the filtered page has loaded (the old one lists that run too).
	if _, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.CSS(`input[name="repo"]`))); err != nil {
		t.Fatal(err)
	}
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#runs tr.run[data-run="`+itoa(failed)+`"]`)))
	if got := rows(); got != itoa(failed) {
		t.Errorf("filtered rows %s, want %d", got, failed)
	}
	webtest.Screenshot(t, ctx, "filtered")
	// The row links to the run.
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`#runs a[href="/runs/`+itoa(failed)+`"]`))); err != nil {
		t.Fatal(err)
	}
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS("#facts")))
	if got := webtest.Text(t, ctx, "h1"); !strings.Contains(got, "Run "+itoa(failed)) {
		t.Errorf("heading %q", got)
	}
}

func TestBrowserAccessRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.run(t, seedRun{Owner: "octo", Repo: "pager", State: run.StateSucceeded, Patch: samplePatch})

	// Without a session: the sign-in page, which comes back to the run afterwards.
	ctx := webtest.Browser(t)
	browse(t, ctx, chromedp.Navigate(b.srv.URL+"/runs/"+itoa(id)), chromedp.WaitVisible(chromedp.CSS("#login")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if want := b.srv.URL + "/login?next=%2Fruns%2F" + itoa(id); loc != want {
		t.Errorf("location %s, want %s", loc, want)
	}
	if eval[bool](t, ctx, `document.body.textContent.includes('Pages(n int)')`) {
		t.Error("the sign-in page shows the run")
	}
	webtest.Screenshot(t, ctx, "signed-out")

	// Signed in as bob, who cannot read octo/pager: not found, as for a run that does not exist.
	ctx2 := webtest.Browser(t)
	browse(t, ctx2, chromedp.Navigate(b.srv.URL+"/login?as=bob&next=/runs"))
	resp, err := chromedp.RunResponse(ctx2, chromedp.Navigate(b.srv.URL+"/runs/"+itoa(id)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 404 {
		t.Errorf("bob got status %d, want 404", resp.Status)
	}
	if got := webtest.Text(t, ctx2, "h1"); got != "Not found" {
		t.Errorf("bob sees %q", got)
	}
	if eval[bool](t, ctx2, `document.body.textContent.includes('Pages(n int)') || document.body.textContent.includes('octo/pager')`) {
		t.Error("the refusal shows something of the run")
	}
	webtest.Screenshot(t, ctx2, "no-read-access")
}
