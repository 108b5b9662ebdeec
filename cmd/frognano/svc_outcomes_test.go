package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/outcome"
)

// These tests follow frognano's pull request to its end through the real service (issue 31):
// a run publishes it, people do what they do on GitHub (the fake), GitHub's pull_request
// events are delivered signed, or lost and recovered by reconciliation, and the pull_outcomes
// row is read back.

// publishedPR works one run of the test's issue to its draft pull request and returns its number.
func (e *svcEnv) publishedPR(p *svcProc) int {
	e.t.Helper()
	id := e.queueRun(p)
	r := e.waitState(id, svcRunWait, "succeeded")
	if r.PRNumber == 0 {
		e.t.Fatalf("run %d published no pull request", id)
	}
	// Its end's comment is written once the row says so; wait for it, so that nothing of the
	// run's is left to write when the test changes the repository.
	svcWait(e.t, time.Minute, "the run's outbox to be written", func() (bool, string) {
		var pending bool
		err := e.db.QueryRow(context.Background(), `SELECT outbox IS NOT NULL FROM runs WHERE id = $1`, id).Scan(&pending)
		return err == nil && !pending, fmt.Sprint(err)
	})
	return r.PRNumber
}

// pullEvent delivers the pull_request event GitHub sends for action on pull request number by
// sender (synchronize: from before), signed, and returns the answer's status and body.
func (e *svcEnv) pullEvent(p *svcProc, number int, action, sender, before string) (int, svcAnswer) {
	e.t.Helper()
	status, b := githubtest.Deliver(e.t, "http://"+p.addr+"/webhook", e.secret, "pull_request",
		e.gh.PullRequestEvent(e.repo, number, action, sender, before))
	var a svcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		e.t.Fatalf("pull_request %s answered %d: %s", action, status, b)
	}
	return status, a
}

// recorded delivers the event and requires it recorded (200).
func (e *svcEnv) recorded(p *svcProc, number int, action, sender, before string) {
	e.t.Helper()
	if status, a := e.pullEvent(p, number, action, sender, before); status != http.StatusOK || a.Status != "recorded" {
		e.t.Fatalf("pull_request %s: %d %+v, want 200 recorded", action, status, a)
	}
}

func (e *svcEnv) outcome(number int) outcome.Row {
	e.t.Helper()
	r, err := outcome.NewStore(e.db).Get(context.Background(), e.repo.ID, number)
	if err != nil {
		e.t.Fatalf("reading the outcome of #%d: %v", number, err)
	}
	return r
}

// sync runs `frognano outcomes sync` against the test's database and fake GitHub.
func (e *svcEnv) sync() string {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"outcomes", "sync"}, e.getenv, &stdout, &stderr); err != nil {
		e.t.Fatalf("frognano outcomes sync: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// apiCalls counts the fake's API requests (not git's) from the ith on.
func (e *svcEnv) apiCalls(from int) int {
	n := 0
	for _, r := range e.gh.Requests()[from:] {
		if strings.HasPrefix(r.Path, "/api/v3/") {
			n++
		}
	}
	return n
}

// TestServiceOutcomeMergedAsIs: frognano's pull request, marked ready and merged as it is:
// merged by the person who merged it, ready by who marked it, no commit and no line of
// people's, figures from the events alone (the measure needs no git).
func TestServiceOutcomeMergedAsIs(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()
	n := e.publishedPR(p)
	r := e.outcome(n)
	if r.State != outcome.StateOpen || !r.Ours || r.Issue != svcIssue || r.BotHeadSHA == "" || r.BotHeadSHA != e.gh.Branch(e.repo, svcBranch).SHA ||
		r.PatchLines == nil || *r.PatchLines != 2 || r.BotCommits == nil || *r.BotCommits != 1 || !r.Draft || r.Model == "" {
		t.Fatalf("after the run: %+v", r)
	}
	// A pull request frognano does not follow is ignored, and nothing of it is stored.
	other := e.gh.OpenPersonPR(e.repo, "main", "erin", "Unrelated")
	var before int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM deliveries`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if status, a := e.pullEvent(p, other, "closed", "erin", ""); status != http.StatusAccepted || a.Status != "ignored" {
		t.Fatalf("another pull request's event: %d %+v, want 202 ignored", status, a)
	}
	var after int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM deliveries`).Scan(&after); err != nil || after != before {
		t.Fatalf("deliveries %d -> %d (%v): the ignored event was stored", before, after, err)
	}

	calls := len(e.gh.Requests())
	e.gh.MarkReady(e.repo, n)
	e.recorded(p, n, "ready_for_review", "reviewer-1", "")
	e.gh.MergePR(e.repo, n, "maintainer-2")
	e.recorded(p, n, "closed", "maintainer-2", "")
	svcWait(t, time.Minute, "the merge measured", func() (bool, string) {
		r = e.outcome(n)
		return r.PeopleLines != nil, fmt.Sprintf("%+v", r)
	})
	if r.State != outcome.StateMerged || r.EndedBy != "maintainer-2" || r.EndedAt == nil || r.ReadyBy != "reviewer-1" || r.ReadyAt == nil ||
		r.PeopleCommits != 0 || *r.PeopleLines != 0 || r.Draft || r.MergeSHA != e.gh.Branch(e.repo, "main").SHA {
		t.Fatalf("after the merge: %+v", r)
	}
	t.Logf("API calls after the run, events path, merged as is: %d", e.apiCalls(calls))
	// The rows one run and its pull request's life left, for the issue's closing note.
	var counts []string
	for _, table := range []string{"runs", "run_events", "run_audit", "deliveries", "river_job", "pull_outcomes"} {
		var n int
		if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, fmt.Sprintf("%s %d", table, n))
	}
	t.Logf("rows after one run, two followed events and one ignored: %s", strings.Join(counts, ", "))
}

// TestServiceOutcomeMergedAfterPeopleCommits: people push two commits (one on the file
// frognano's patch changed, one elsewhere), then merge: two commits by people, and the lines
// they changed on frognano's file only, measured with git on the host by the measure job.
func TestServiceOutcomeMergedAfterPeopleCommits(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()
	n := e.publishedPR(p)
	bot := e.gh.Branch(e.repo, svcBranch)
	fixed := bot.Files["stats/basic.py"]
	first := e.gh.PushCommit(e.repo, svcBranch, "stats/basic.py", fixed+"\n\ndef mean(xs):\n    return average(xs)\n", "Add mean")
	e.recorded(p, n, "synchronize", "bob", bot.SHA)
	e.gh.PushCommit(e.repo, svcBranch, "README.md", "Read me, people.\n", "Reword the README")
	e.recorded(p, n, "synchronize", "bob", first)
	if r := e.outcome(n); r.PeopleCommits != 2 {
		t.Fatalf("people_commits = %d after two pushes by people, want 2 (%+v)", r.PeopleCommits, r)
	}
	calls := len(e.gh.Requests())
	e.gh.MergePR(e.repo, n, "maintainer-2")
	e.recorded(p, n, "closed", "maintainer-2", "")
	var r outcome.Row
	svcWait(t, time.Minute, "the merge measured", func() (bool, string) {
		r = e.outcome(n)
		return r.PeopleLines != nil, fmt.Sprintf("%+v", r)
	})
	// Three lines added after an empty one on stats/basic.py ("\n\ndef mean...": 4 lines
	// with the blank ones); README.md is not frognano's file.
	if r.State != outcome.StateMerged || r.PeopleCommits != 2 || *r.PeopleLines != 4 || *r.PatchLines != 2 || r.EndedBy != "maintainer-2" {
		t.Fatalf("after the merge: %+v", r)
	}
	t.Logf("API calls of the events path at merge (the measure job): %d", e.apiCalls(calls))
}

// TestServiceOutcomeClosedAndReopened: closed without merge by a person, then reopened; the
// close is counted in frognano_pull_requests_ended_total once, whatever redelivers it.
func TestServiceOutcomeClosedAndReopened(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.env["FROGNANO_METRICS_ADDR"] = "127.0.0.1:0"
	e.env["FROGNANO_ADMIN_TOKEN"] = svcAdminToken
	p := e.start()
	admin := svcAdminAddr(t, e)
	n := e.publishedPR(p)
	if v := svcMetric(t, svcScrape(t, admin), `frognano_pull_requests_ended_total{outcome="closed"}`); v != 0 {
		t.Errorf("closed pull requests counted before any: %v", v)
	}
	e.gh.ClosePRAt(e.repo, n)
	e.recorded(p, n, "closed", "carol", "")
	if r := e.outcome(n); r.State != outcome.StateClosed || r.EndedBy != "carol" || r.EndedAt == nil || r.PeopleLines != nil {
		t.Fatalf("after the close: %+v", r)
	}
	// The same delivery again changes nothing (deduplicated by its id).
	m := e.gh.PullRequestEvent(e.repo, n, "closed", "carol", "")
	status, b := githubtest.DeliverAs(t, "http://"+p.addr+"/webhook", e.secret, "pull_request", "close-1", m)
	if status != http.StatusOK {
		t.Fatalf("first delivery of close-1: %d %s", status, b)
	}
	if status, b = githubtest.DeliverAs(t, "http://"+p.addr+"/webhook", e.secret, "pull_request", "close-1", m); status != http.StatusOK || !strings.Contains(string(b), `"duplicate"`) {
		t.Fatalf("close-1 again: %d %s, want 200 duplicate", status, b)
	}
	text := svcScrape(t, admin)
	if v := svcMetric(t, text, `frognano_pull_requests_ended_total{outcome="closed"}`); v != 1 {
		t.Errorf("closed pull requests counted: %v, want 1", v)
	}
	if v := svcMetric(t, text, `frognano_pull_requests_ended_total{outcome="merged"}`); v != 0 {
		t.Errorf("merged pull requests counted: %v, want 0", v)
	}
	e.gh.ReopenPR(e.repo, n)
	e.recorded(p, n, "reopened", "carol", "")
	if r := e.outcome(n); r.State != outcome.StateOpen || r.Reopened != 1 || r.EndedAt != nil || r.EndedBy != "" {
		t.Fatalf("after the reopen: %+v", r)
	}

	// Closed again, and replaced by a person's own pull request that GitHub links to the issue
	// and that was merged: the next round records it.
	e.gh.ClosePRAt(e.repo, n)
	e.recorded(p, n, "closed", "carol", "")
	if out, err := exec.Command("git", "-C", e.repo.Dir, "branch", "erin-fix", "main").CombinedOutput(); err != nil {
		t.Fatalf("making branch erin-fix: %v: %s", err, out)
	}
	e.gh.PushCommit(e.repo, "erin-fix", "stats/basic.py", e.gh.Branch(e.repo, svcBranch).Files["stats/basic.py"], "Erin's fix")
	theirs := e.gh.OpenPersonPR(e.repo, "erin-fix", "erin", "Fix average")
	e.gh.CrossReference(e.repo, svcIssue, n) // frognano's own is on the timeline too
	e.gh.CrossReference(e.repo, svcIssue, theirs)
	e.gh.MergePR(e.repo, theirs, "erin")
	if out := e.sync(); !strings.Contains(out, fmt.Sprintf("%s/%s#%d: replaced by #%d", svcOwner, svcRepo, n, theirs)) {
		t.Fatalf("the sync printed:\n%s", out)
	}
	if r := e.outcome(n); r.State != outcome.StateClosed || r.ReplacedBy == nil || *r.ReplacedBy != theirs || r.Reopened != 1 {
		t.Fatalf("after the replacement: %+v", r)
	}
}

// TestServiceOutcomeLostEventRecoveredByReconciliation: the merge's event never arrives; the
// service's periodic round (FROGNANO_OUTCOMES_INTERVAL) finds the merge, with who merged, the
// people's commit and the lines they changed.
func TestServiceOutcomeLostEventRecoveredByReconciliation(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	e.env["FROGNANO_OUTCOMES_INTERVAL"] = "2s"
	p := e.start()
	n := e.publishedPR(p)
	fixed := e.gh.Branch(e.repo, svcBranch).Files["stats/basic.py"]
	e.gh.PushCommit(e.repo, svcBranch, "stats/basic.py", strings.Replace(fixed, "average of an empty list", "no average of nothing", 1), "Reword")
	calls := len(e.gh.Requests())
	e.gh.MergePR(e.repo, n, "maintainer-2") // no event delivered: lost
	var r outcome.Row
	svcWait(t, time.Minute, "the periodic round to find the merge", func() (bool, string) {
		r = e.outcome(n)
		return r.State == outcome.StateMerged && r.PeopleLines != nil, fmt.Sprintf("%+v", r)
	})
	if r.EndedBy != "maintainer-2" || r.PeopleCommits != 1 || *r.PeopleLines != 2 || r.SyncedAt == nil ||
		r.EventAt == nil || r.EndedAt == nil || !r.EventAt.Equal(*r.EndedAt) { // the end is the latest event: one from before it is stale
		t.Fatalf("after reconciliation: %+v", r)
	}
	t.Logf("API calls of the reconciliation path for one merged pull request (round and measure): %d", e.apiCalls(calls))
}

// TestServiceOutcomeRepositoryDeletedWhileOpen: the repository is deleted while frognano's
// pull request is open; `frognano outcomes sync` records it as gone after asking once, and
// never asks again.
func TestServiceOutcomeRepositoryDeletedWhileOpen(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()
	n := e.publishedPR(p)
	calls := len(e.gh.Requests())
	out := e.sync()
	if !strings.Contains(out, "1 pull request(s) asked about, 4 API call(s), 0 change(s)") {
		t.Fatalf("the first sync printed:\n%s", out)
	}
	t.Logf("API calls of a round for one open pull request: %d (counted %d)", e.apiCalls(calls), outcome.CostOpen+outcome.CostPull)
	if got := e.apiCalls(calls); got != outcome.CostOpen+outcome.CostPull {
		t.Errorf("the round made %d API calls, counted %d", got, outcome.CostOpen+outcome.CostPull)
	}
	e.gh.DeleteRepo(e.repo)
	calls = len(e.gh.Requests())
	out = e.sync()
	if !strings.Contains(out, fmt.Sprintf("%s/%s#%d: repository gone (1 pull request(s))", svcOwner, svcRepo, n)) {
		t.Fatalf("the sync after the deletion printed:\n%s", out)
	}
	if !strings.Contains(out, "0 pull request(s) asked about, 4 API call(s), 1 change(s)") {
		t.Errorf("the sync after the deletion printed:\n%s", out)
	}
	if got := e.apiCalls(calls); got != outcome.CostOpenRefused {
		t.Errorf("the round that found the repository gone made %d API calls, counted %d", got, outcome.CostOpenRefused)
	}
	if r := e.outcome(n); r.State != outcome.StateGone || r.EndedAt == nil {
		t.Fatalf("after the deletion: %+v", r)
	}
	calls = len(e.gh.Requests())
	if out = e.sync(); !strings.Contains(out, "0 pull request(s) asked about, 0 API call(s), 0 change(s)") {
		t.Fatalf("the sync after that printed:\n%s", out)
	}
	if got := len(e.gh.Requests()) - calls; got != 0 {
		t.Errorf("%d requests to GitHub about a gone pull request, want none", got)
	}
}
