package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/web/webtest"
)

// TestServeWithoutSignInHasNoRunPages: nothing of a run is public, so without OAuth or a token
// the pages are not served at all, and the log says why.
func TestServeWithoutSignInHasNoRunPages(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-never.json") // no run: the model must not be asked
	e.env["FROGNANO_WORKERS"] = "0"
	p := e.start()
	for _, path := range []string{"/runs", "/runs/1", "/runs/1/events", "/login"} {
		resp, err := http.Get("http://" + p.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	if !strings.Contains(e.logs.String(), "run pages are off") {
		t.Errorf("no log line says why the run pages are off:\n%s", svcTail(e.logs.String(), 2000))
	}
}

// TestServiceRunPage: a labelled issue is fixed through the service with the run pages on (a
// shared access token): the status comment, the pull request body and the check run link the
// run's page, and in Chromium, after signing in with the token, the page shows the run's
// steps, the patch and the tests.
func TestServiceRunPage(t *testing.T) {
	t.Parallel()
	const token = "run-pages-token-0123456789abcdef0123456789"
	e := svcSetup(t, "svc-pyaverage.json")
	e.env["FROGNANO_PUBLIC_URL"] = "http://frognano.test"
	e.env["FROGNANO_WEB_TOKEN"] = token
	p := e.start()

	id := e.queueRun(p)
	e.waitState(id, svcRunWait, "succeeded")
	page := fmt.Sprintf("http://frognano.test/runs/%d", id)

	// The worker wrote what the page follows as the run went: its attempt, the agent's start,
	// each step, the tests and, once the attempt returned, the end; and, among the steps (the
	// tests before run while the agent works), each test run's start, and any wait for a
	// sandbox.
	svcWait(t, svcRunWait, "the run's events", func() (bool, string) {
		var kinds, starts string
		if err := e.db.QueryRow(context.Background(), `SELECT
				coalesce(string_agg(kind, ',' ORDER BY id) FILTER (WHERE kind NOT IN ('tests_start', 'sandbox_wait')), ''),
				coalesce(string_agg(data->>'after', ',' ORDER BY id) FILTER (WHERE kind = 'tests_start'), '')
			FROM run_events WHERE run_id = $1`, id).Scan(&kinds, &starts); err != nil {
			return false, err.Error()
		}
		// With few sandbox slots the tests before may wait until the agent is done, and start
		// after the tests after.
		both := starts == "false,true" || starts == "true,false"
		return kinds == "attempt,agent,step,step,step,step,step,tests,end" && both, kinds + "; tests starts (after): " + starts
	})

	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 {
		t.Fatalf("%d PRs", len(prs))
	}
	if body := prs[0].Body; !strings.Contains(body, page) || !strings.HasSuffix(body, "\n\nFixes #1") {
		t.Errorf("PR body lacks the run page link before the Fixes line: %s", svcTail(body, 300))
	}
	checks := e.gh.CheckRuns(e.repo)
	if len(checks) != 1 || checks[0]["details_url"] != page {
		t.Errorf("check runs %v, want one with details_url %s", checks, page)
	}
	svcWait(t, svcRunWait, "the status comment to link the run page", func() (bool, string) {
		c := e.onlyComment()
		return strings.Contains(c.Body, page) && strings.Contains(c.Body, "pull request"), c.Body
	})

	// Without a session the events stream is refused and nothing of the run is in the answer.
	resp, err := http.Get(fmt.Sprintf("http://%s/runs/%d/events", p.addr, id))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "average") {
		t.Errorf("events without a session: %d %q", resp.StatusCode, b)
	}

	ctx := webtest.Browser(t)
	base := "http://" + p.addr
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#diff"))); err != nil {
		t.Fatal(err)
	}
	webtest.Screenshot(t, ctx, "run")
	if got := webtest.Text(t, ctx, "#diff"); !strings.Contains(got, "stats/basic.py") || !strings.Contains(got, "+") {
		t.Errorf("diff: %q", got)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#steps .step').length`))
	if err != nil || n == 0 {
		t.Errorf("%d steps shown (%v), want the run's steps", n, err)
	}
	if got := webtest.Text(t, ctx, "#steps .step .args"); !strings.HasPrefix(got, "{\n  \"") {
		t.Errorf("the first call's arguments: %q", got)
	}
	if got := webtest.Text(t, ctx, "#tests-summary"); !strings.Contains(got, "Before") {
		t.Errorf("tests: %q", got)
	}
	if got := webtest.Text(t, ctx, "#timeline"); !strings.Contains(got, "published") {
		t.Errorf("timeline: %q", got)
	}
	if got := webtest.Text(t, ctx, "#task"); !strings.Contains(got, "average() divides by the wrong count") {
		t.Errorf("task: %q", got)
	}
}

// TestServiceRunPageLive follows a run in Chromium while the real worker works it: the page,
// opened after the first step, shows the second step when the worker finishes it, without a
// reload, and the whole run once it ends. The second step's command waits until the test
// creates a file in the agent's sandbox, which it does only once the page shows the first.
func TestServiceRunPageLive(t *testing.T) {
	t.Parallel()
	const token = "run-pages-token-0123456789abcdef0123456789"
	e := svcSetup(t, "svc-live.json")
	e.env["FROGNANO_PUBLIC_URL"] = "http://frognano.test"
	e.env["FROGNANO_WEB_TOKEN"] = token
	p := e.start()
	id := e.queueRun(p)
	svcWait(t, svcRunWait, "the run's first step", func() (bool, string) {
		var n int
		if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM run_events WHERE run_id = $1 AND kind = 'step'`, id).Scan(&n); err != nil {
			return false, err.Error()
		}
		return n == 1, fmt.Sprintf("%d steps", n)
	})

	ctx := webtest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("http://%s/runs/%d", p.addr, id)),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#live")),
		chromedp.WaitVisible(chromedp.CSS(`.step[data-n="1"]`))); err != nil {
		t.Fatal(err)
	}
	webtest.Screenshot(t, ctx, "step-1")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}

	// Release the second step.
	sandbox := e.waitAgentContainer(id)
	if out, err := exec.Command("docker", "exec", sandbox, "touch", "/tmp/frognano-go").CombinedOutput(); err != nil {
		t.Fatalf("releasing the waiting step: %v: %s", err, out)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.step[data-n="2"]`))); err != nil {
		t.Fatal(err)
	}
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sameDocument === true`))
	if err != nil || !same {
		t.Errorf("the page reloaded to show the new step (%v)", err)
	}
	if got := webtest.Text(t, ctx, `.step[data-n="2"] .obs pre`); !strings.Contains(got, "released") {
		t.Errorf("step 2's observation: %q", got)
	}
	webtest.Screenshot(t, ctx, "step-2")

	// The run goes on and ends: the page shows the whole run.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#diff")), chromedp.WaitNotPresent(chromedp.CSS("#live"))); err != nil {
		t.Fatal(err)
	}
	if got := webtest.Text(t, ctx, "#state"); got != "succeeded" {
		t.Errorf("state %q", got)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#steps .step').length`)); err != nil || n != 6 {
		t.Errorf("%d steps on the finished page (%v), want 6", n, err)
	}
	webtest.Screenshot(t, ctx, "finished")
}
