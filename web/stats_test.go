package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/web/webtest"
)

// seedPull is a pull_outcomes row of frognano's (ours), with the run that opened it.
type seedPull struct {
	Repo          string // owner/name, one of the bundle's repositories
	Number        int
	Opened, Ended string // RFC 3339; Ended "" while open
	State         string
	Patch, People int // lines; People < 0: not measured
	FollowUps     int
	Tokens        int64 // of the run that published it
}

// pull records p and its run (created ten minutes before it opened, published to it).
func (b *bundle) pull(t *testing.T, p seedPull) int64 {
	t.Helper()
	owner, repo, _ := strings.Cut(p.Repo, "/")
	id := b.run(t, seedRun{Owner: owner, Repo: repo, Issue: p.Number - 100, State: "succeeded", PRURL: "https://github.example/" + p.Repo + "/pull/" + itoa(int64(p.Number))})
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET created_at = $2::timestamptz - interval '10 minutes', pr_number = $3, model = 'default',
			trigger = 'label', trigger_label = 'frognano', prompt_tokens = $4, completion_tokens = 0 WHERE id = $1`,
		id, p.Opened, p.Number, p.Tokens); err != nil {
		t.Fatalf("seeding a pull request's run: %v", err)
	}
	var people any
	if p.People >= 0 {
		people = p.People
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours, issue,
			first_run_id, last_run_id, model, opened_at, state, ended_at, patch_lines, people_lines, followups)
		VALUES ($1, $2, 5, $3, $4, true, $5, $6, $6, 'default', $7, $8, nullif($9, '')::timestamptz, $10, $11, $12)`,
		b.auth.repoID(p.Repo), p.Number, owner, repo, p.Number-100, id, p.Opened, p.State, p.Ended, p.Patch, people, p.FollowUps); err != nil {
		t.Fatalf("seeding a pull request: %v", err)
	}
	return id
}

// statsHistory seeds pull requests in alice's two repositories, in bob's, and in one nobody
// may read:
//
//	octo/pager  #101 merged 6h after opening (10 lines, people changed 0), 1100 tokens, W10
//	            #102 merged 48h after (20 lines, people changed 5), 2 follow-ups, 2750 tokens, W10
//	            #103 closed, 1 follow-up, W11
//	octo/other  #201 merged 12h after (not measured), 4400 tokens, W11
//	            #202 open, 1 follow-up, W11
//	bob/own     #301 closed, W11
//	octo/secret #401 merged, #402 merged (W12): nobody here may read it
//
// alice, by hand: octo/other: 2 runs, opened 2, merged 1, open 1, acceptance 1/1 = 100%
// [21%, 100%], 12h, not measured, follow-ups 0.50, 4400 tokens; octo/pager: 3 runs, opened 3,
// merged 2, closed 1, acceptance 2/3 = 67% [21%, 94%], median(6h, 48h) = 27h, median(0, 0.25)
// = 13% of 2, follow-ups 1.00, (1100 + 2750)/2 = 1925 tokens; all: 5 runs, opened 5, merged 3,
// closed 1, open 1, 3/4 = 75% [30%, 95%], median(6h, 48h, 12h) = 12h, follow-ups 4/5 = 0.80,
// (1100 + 2750 + 4400)/3 = 2750 tokens. Per week: 2026-W10 2/2 = 100%, 2026-W11 1/2 = 50%.
// bob: bob/own only, 0/1 = 0% [0%, 79%].
func statsHistory(t *testing.T, b *bundle) {
	t.Helper()
	b.auth.allow("nobody-reads-this") // a login with no repository
	b.auth.repoID("octo/secret")
	for _, p := range []seedPull{
		{"octo/pager", 101, "2026-03-02T10:00:00Z", "2026-03-02T16:00:00Z", "merged", 10, 0, 0, 1100},
		{"octo/pager", 102, "2026-03-03T09:00:00Z", "2026-03-05T09:00:00Z", "merged", 20, 5, 2, 2750},
		{"octo/pager", 103, "2026-03-10T12:00:00Z", "2026-03-11T12:00:00Z", "closed", 0, -1, 1, 300},
		{"octo/other", 201, "2026-03-11T08:00:00Z", "2026-03-11T20:00:00Z", "merged", 8, -1, 0, 4400},
		{"octo/other", 202, "2026-03-12T08:00:00Z", "", "open", 0, -1, 1, 1650},
		{"bob/own", 301, "2026-03-12T08:00:00Z", "2026-03-13T08:00:00Z", "closed", 0, -1, 0, 500},
		{"octo/secret", 401, "2026-03-16T08:00:00Z", "2026-03-16T09:00:00Z", "merged", 5, 5, 0, 100},
		{"octo/secret", 402, "2026-03-17T08:00:00Z", "2026-03-17T09:00:00Z", "merged", 5, 5, 0, 100},
	} {
		b.pull(t, p)
	}
}

// TestBrowserStatsPage: the stats page in Chromium shows alice the figures of her two
// repositories only, computed as by hand (statsHistory), and the two charts as inline SVG
// whose bars carry the rates, with a title and a description; the stylesheet styles them
// under the pages' content security policy. bob sees his own repository alone.
func TestBrowserStatsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	statsHistory(t, b)
	ctx := webtest.Browser(t)
	b.signIn(t, ctx, "alice", "/stats?since=2026-03-01&by=repository")
	browse(t, ctx, chromedp.WaitVisible(chromedp.CSS("#figures")))
	webtest.Screenshot(t, ctx, "stats")

	rows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#figures tbody tr.group')).map(r =>
		Array.from(r.children).map(c => c.textContent.trim()).join(' | '))`)
	want := []string{
		"octo/other | 2 | 2 | 1 | 0 | 1 | 100% (21% to 100%) | 12h | not measured | 0.50 | 4400",
		"octo/pager | 3 | 3 | 2 | 1 | 0 | 67% (21% to 94%) | 27h | 13% (of 2) | 1.00 | 1925",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("alice's figures:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	total := eval[string](t, ctx, `Array.from(document.querySelector('#figures tfoot tr').children).map(c => c.textContent.trim()).join(' | ')`)
	if want := "(all) | 5 | 5 | 3 | 1 | 1 | 75% (30% to 95%) | 12h | 13% (of 2) | 0.80 | 2750"; total != want {
		t.Errorf("alice's total:\n%s\nwant\n%s", total, want)
	}
	if eval[bool](t, ctx, `document.body.textContent.includes('bob/own') || document.body.textContent.includes('octo/secret')`) {
		t.Error("alice's stats page names a repository she cannot read")
	}

	// The charts: one bar per group with a decided pull request, as wide as its rate.
	bars := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#chart-repository g.row')).map(g =>
		g.dataset.label + '=' + (g.querySelector('rect.bar') ? g.querySelector('rect.bar').dataset.value + '@' + g.querySelector('rect.bar').getAttribute('width') : 'none'))`)
	if got := strings.Join(bars, " "); got != "octo/other=1.0000@380.0 octo/pager=0.6667@253.3" {
		t.Errorf("the per-repository chart's bars: %s", got)
	}
	weeks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#chart-week g.row')).map(g =>
		g.dataset.label + '=' + (g.querySelector('rect.bar') ? g.querySelector('rect.bar').dataset.value : 'none') + ' ' + g.querySelector('text.value').textContent)`)
	if got := strings.Join(weeks, ", "); got != "2026-W10=1.0000 100% (2 of 2), 2026-W11=0.5000 50% (1 of 2)" {
		t.Errorf("the per-week chart's bars: %s", got)
	}
	for _, id := range []string{"chart-week", "chart-repository"} {
		got := eval[string](t, ctx, `(function () { var s = document.getElementById('`+id+`');
			return s.getAttribute('role') + '|' + s.querySelector(':scope > title').textContent + '|' + s.querySelector(':scope > desc').textContent +
				'|' + s.getAttribute('aria-labelledby'); })()`)
		if !strings.HasPrefix(got, "img|Acceptance per ") || !strings.Contains(got, "since 2026-03-01: 2 of 2 with pull requests decided") ||
			!strings.HasSuffix(got, "|"+id+"-title "+id+"-desc") {
			t.Errorf("%s's accessible name and description: %q", id, got)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector('#chart-repository g.row title').textContent`); !strings.Contains(got, "octo/other: 100% of the decided pull requests merged (1 of 1), 95% interval 21% to 100%") {
		t.Errorf("a bar's title: %q", got)
	}
	// The stylesheet (the only style the policy allows) colours the bars.
	if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('#chart-repository rect.bar')).fill`); got != "rgb(84, 174, 255)" {
		t.Errorf("the bars' fill is %q: the stylesheet does not reach them", got)
	}
	if eval[int](t, ctx, `document.scripts.length`) != 0 {
		t.Error("the stats page runs a script")
	}

	b.signIn(t, ctx, "bob", "/stats?since=2026-03-01")
	webtest.WaitText(t, ctx, "#figures tbody tr.group th", "bob/own")
	if got := eval[string](t, ctx, `Array.from(document.querySelectorAll('#figures tbody tr.group')).map(r => r.dataset.key).join(',') + ' ' +
		document.querySelector('#figures tbody tr.group .acceptance').textContent`); got != "bob/own 0% (0% to 79%)" {
		t.Errorf("bob's figures: %q", got)
	}
	if got := eval[string](t, ctx, `Array.from(document.querySelectorAll('#chart-repository rect.bar')).map(r => r.dataset.value + '@' + r.getAttribute('width')).join(' ')`); got != "0.0000@0.0" {
		t.Errorf("bob's per-repository bars: %q", got)
	}
	if eval[bool](t, ctx, `document.body.textContent.includes('octo/')`) {
		t.Error("bob's stats page names alice's repositories")
	}
}

// TestStatsPageAnswers: the stats page needs a sign-in, says what is wrong with a bad start or
// grouping (400), keeps the pages' content security policy, and a person who can read none
// of the repositories sees no figure.
func TestStatsPageAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	statsHistory(t, b)
	if resp := b.get(t, "/stats", ""); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Errorf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, q := range []string{"since=March", "since=-3d", "by=planet", "since=" + strings.Repeat("9", 50)} {
		resp := b.get(t, "/stats?"+q, "alice")
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `id="problem"`) || strings.Contains(string(raw), `id="figures"`) {
			t.Errorf("/stats?%s: %d\n%.400s", q, resp.StatusCode, raw)
		}
	}
	resp := b.get(t, "/stats?since=2026-03-01&by=week", "alice")
	raw, _ := io.ReadAll(resp.Body)
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'self';") ||
		strings.Contains(csp, "unsafe-inline") || strings.Contains(string(raw), "style=") || strings.Contains(string(raw), "<script") {
		t.Errorf("/stats: %d, policy %q", resp.StatusCode, csp)
	}
	for _, want := range []string{`data-key="2026-W10"`, `data-key="2026-W11"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/stats by week lacks %s", want)
		}
	}
	// A label is a person's text: it stays inert in the table and the charts.
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET trigger_label = $1 WHERE issue = 1`, "<script>x()</script>\u202efix"); err != nil {
		t.Fatal(err)
	}
	resp = b.get(t, "/stats?since=2026-03-01&by=label", "alice")
	raw, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(raw), "<script>") || strings.Contains(string(raw), "\u202e") ||
		!strings.Contains(string(raw), "&lt;script&gt;x()&lt;/script&gt;[U&#43;202E]fix") {
		t.Errorf("/stats by a hostile label: %d\n%s", resp.StatusCode, raw)
	}
	resp = b.get(t, "/stats?since=2026-03-01", "nobody-reads-this")
	raw, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `id="nofigures"`) || strings.Contains(string(raw), "octo/") {
		t.Errorf("a person who reads nothing: %d\n%.600s", resp.StatusCode, raw)
	}
}

// TestBrowserRunsListSaysWhatBecameOfThePullRequest (issue 31): the runs list says who asked
// for each run, how long it took from the request to its end, and what became of its pull
// request (pull_outcomes: open, merged, closed; nothing when none is recorded, or for a state
// the list does not name, such as a pull request deleted while open).
func TestBrowserRunsListSaysWhatBecameOfThePullRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	merged := b.pull(t, seedPull{"octo/pager", 101, "2026-03-02T10:00:00Z", "2026-03-02T16:00:00Z", "merged", 10, 0, 0, 1100})
	closed := b.pull(t, seedPull{"octo/pager", 102, "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z", "closed", 0, -1, 0, 10})
	open := b.pull(t, seedPull{"octo/other", 201, "2026-03-05T10:00:00Z", "", "open", 0, -1, 0, 10})
	gone := b.pull(t, seedPull{"octo/other", 202, "2026-03-06T10:00:00Z", "", "open", 0, -1, 0, 10})
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `ALTER TABLE pull_outcomes DROP CONSTRAINT IF EXISTS pull_outcomes_state_check`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE pull_outcomes SET state = 'gone' WHERE number = 202`); err != nil {
		t.Fatal(err)
	}
	// A run that published but whose pull request has no outcome yet, and a failed one that
	// a person mentioned the App for and which has not published.
	noOutcome := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 9, State: run.StateSucceeded, PRURL: "https://github.example/octo/pager/pull/109"})
	failed := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 10, State: run.StateFailed, ExitReason: "max_steps"})
	running := b.run(t, seedRun{Owner: "octo", Repo: "pager", Issue: 11, State: run.StateRunning})
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET pr_number = 109 WHERE id = $1`, noOutcome); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET trigger = 'mention', labeler = 'carol', created_at = '2026-03-07T10:00:00Z',
		finished_at = '2026-03-07T11:30:05Z' WHERE id = $1`, failed); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE runs SET finished_at = created_at + interval '95 seconds' WHERE id = $1`, merged); err != nil {
		t.Fatal(err)
	}

	browser := webtest.Browser(t)
	b.signIn(t, browser, "alice", "/runs")
	browse(t, browser, chromedp.WaitVisible(chromedp.CSS("#runs")))
	webtest.Screenshot(t, browser, "runs-outcomes")
	cell := func(id int64, class string) string {
		t.Helper()
		return eval[string](t, browser, `document.querySelector('tr[data-run="`+itoa(id)+`"] td.`+class+`').textContent.trim()`)
	}
	for _, tt := range []struct {
		id   int64
		want string
	}{{merged, "#101 merged"}, {closed, "#102 closed"}, {open, "#201 open"}, {gone, "#202"}, {noOutcome, "#109"}, {failed, ""}, {running, ""}} {
		if got := cell(tt.id, "pull"); got != tt.want {
			t.Errorf("run %d's pull request: %q, want %q", tt.id, got, tt.want)
		}
	}
	if got := cell(failed, "asked-by"); got != "@carol (mentioned the App on the issue)" {
		t.Errorf("who asked for the failed run: %q", got)
	}
	if got := cell(merged, "asked-by"); got != "@maintainer (labelled the issue)" {
		t.Errorf("who asked for the merged run: %q", got)
	}
	if got := cell(failed, "took"); got != "1h30m5s" {
		t.Errorf("how long the failed run took: %q", got)
	}
	if got := cell(merged, "took"); got != "1m35s" {
		t.Errorf("how long the merged run took: %q", got)
	}
	if got := cell(running, "took"); got != "not ended yet" {
		t.Errorf("how long the running run took: %q", got)
	}
}

// TestNewNeedsAStatsReader: the runs list and /stats read the figures; pages without them are
// refused at start, not broken at the first request.
func TestNewNeedsAStatsReader(t *testing.T) {
	t.Parallel()
	p, err := New(Config{Runs: run.NewStore(nil, nil), Auth: &testAuth{}})
	if err == nil || p != nil || !strings.Contains(err.Error(), "stats.Reader") {
		t.Errorf("New without a stats.Reader: %v", err)
	}
}
