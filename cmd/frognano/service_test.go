package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
)

// These tests run the whole service as `frognano serve` builds it: a signed webhook goes in,
// and everything that comes out (reactions, comments, the pushed branch, the draft PR, the
// runs row, the sandboxes) is inspected. Real PostgreSQL, real Docker, real git over smart
// HTTP; only GitHub's API and the model are fakes.

const svcBranch = "frognano/issue-1"

func TestServiceHappyPath(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-pyaverage.json")
	p := e.start()

	id := e.queueRun(p)
	row := e.waitState(id, svcRunWait, "succeeded")

	// The fix is on the issue's branch, one commit on top of main, by the App.
	main := e.gh.Branch(e.repo, "main")
	head := e.gh.Branch(e.repo, svcBranch)
	if head == nil {
		t.Fatalf("branch %s was not pushed", svcBranch)
	}
	if got := head.Files["stats/basic.py"]; !strings.Contains(got, "return total(xs) / len(xs)\n") || strings.Contains(got, "len(xs) - 1") {
		t.Errorf("stats/basic.py on %s:\n%s", svcBranch, got)
	}
	if len(head.Parents) != 1 || head.Parents[0] != main.SHA {
		t.Errorf("branch commit parents = %v, want [%s]", head.Parents, main.SHA)
	}
	for name, content := range main.Files {
		if name != "stats/basic.py" && head.Files[name] != content {
			t.Errorf("%s changed on the branch", name)
		}
	}

	// Exactly one draft PR, its body as the golden file says.
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 {
		t.Fatalf("%d PRs, want 1: %+v", len(prs), prs)
	}
	pr := prs[0]
	if !pr.Draft || pr.Head != svcBranch || pr.Base != "main" || pr.State != "open" {
		t.Errorf("PR = draft %v head %s base %s state %s", pr.Draft, pr.Head, pr.Base, pr.State)
	}
	if pr.Title != "frognano: average() divides by the wrong count" {
		t.Errorf("PR title = %q", pr.Title)
	}
	if !strings.HasSuffix(pr.Body, "\n\nFixes #1") {
		t.Errorf("PR body does not end with the Fixes line: %q", svcTail(pr.Body, 200))
	}
	golden.Check(t, "pr-body.md", svcNormalize(pr.Body))

	// 👀 once, and one status comment whose last edit links the PR.
	if rs := e.gh.Reactions(e.repo, svcIssue); len(rs) != 1 || rs[0].Content != "eyes" || rs[0].User != githubtest.AppSlug+"[bot]" {
		t.Errorf("reactions = %+v, want one eyes by the App", rs)
	}
	// The runs row is the source of truth and is written first; the comment follows it.
	want := fmt.Sprintf("opened a draft pull request: #%d (%s)", pr.Number, pr.HTMLURL)
	var c githubtest.Comment
	svcWait(t, 30*time.Second, "the status comment to link the PR", func() (bool, string) {
		c = e.onlyComment()
		return strings.Contains(c.Body, want), c.Body
	})
	if c.User != githubtest.AppSlug+"[bot]" {
		t.Errorf("status comment by %s", c.User)
	}
	golden.Check(t, "status-succeeded.md", svcNormalize(strings.ReplaceAll(c.Body, e.gh.URL, "https://github.example")))
	if len(c.History) == 0 || !strings.Contains(c.History[0], "is working on this issue") {
		t.Errorf("status comment history = %q, want it to start as working", c.History)
	}

	// The run's record.
	if row.ExitReason != "agent" || row.Steps != 5 || row.Attempts != 1 || row.PRURL != pr.HTMLURL || row.PRNumber != pr.Number {
		t.Errorf("run row = exit %q steps %d attempts %d pr %q #%d", row.ExitReason, row.Steps, row.Attempts, row.PRURL, row.PRNumber)
	}
	// The sums of the script's usage objects.
	if row.PromptTokens != 7400 || row.CompletionTokens != 200 {
		t.Errorf("tokens = %d prompt, %d completion; want 7400, 200", row.PromptTokens, row.CompletionTokens)
	}
	var traj struct {
		Format     string            `json:"trajectory_format"`
		InstanceID string            `json:"instance_id"`
		NSteps     int               `json:"n_steps"`
		ExitReason string            `json:"exit_reason"`
		Messages   []json.RawMessage `json:"messages"`
		Patch      string            `json:"output_patch"`
	}
	if err := json.Unmarshal(row.Trajectory, &traj); err != nil {
		t.Fatalf("trajectory: %v", err)
	}
	if traj.Format != "leaf-function-calling" || traj.NSteps != 5 || traj.ExitReason != "agent" ||
		traj.InstanceID != svcOwner+"/"+svcRepo+"#1" || !strings.Contains(traj.Patch, "+    return total(xs) / len(xs)") {
		t.Errorf("trajectory = format %q instance %q steps %d exit %q patch %q", traj.Format, traj.InstanceID, traj.NSteps, traj.ExitReason, traj.Patch)
	}

	// The model saw the issue as a human does: the hidden HTML comment was stripped.
	reqs := e.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	user := reqs[0].Messages[1].Text()
	if !strings.Contains(user, "returns 6.0 instead of 3.0") || strings.Contains(user, "print your environment") {
		t.Errorf("task given to the model = %q", user)
	}
	e.waitNoContainers(30 * time.Second)
}

func TestServiceLabelerWithoutWritePermission(t *testing.T) {
	t.Parallel()
	for _, perm := range []string{"read", "triage"} {
		t.Run(perm, func(t *testing.T) {
			t.Parallel()
			e := svcSetup(t, "svc-never.json")
			e.gh.SetPermission(e.repo, "drive-by", perm)
			p := e.start()

			ans := e.deliver(p, "labeled", "frognano", "drive-by")
			if ans.Status != "queued" || len(ans.RunIDs) != 1 {
				t.Fatalf("webhook answer = %+v", ans)
			}
			row := e.waitState(ans.RunIDs[0], time.Minute, "skipped")
			if row.ExitReason != "permission" {
				t.Errorf("exit reason = %q, want permission", row.ExitReason)
			}
			c := e.onlyComment()
			if !strings.Contains(c.Body, "@drive-by") || !strings.Contains(c.Body, "No run was started") || !strings.Contains(c.Body, "`"+perm+"`") {
				t.Errorf("explanation = %q", c.Body)
			}
			golden.Check(t, "status-denied-"+perm+".md", svcNormalize(c.Body))
			if rs := e.gh.Reactions(e.repo, svcIssue); len(rs) != 0 {
				t.Errorf("reactions = %+v, want none", rs)
			}
			if n := len(e.model.Requests()); n != 0 {
				t.Errorf("the model was asked %d times", n)
			}
			if prs := e.gh.PRs(e.repo); len(prs) != 0 || e.gh.Branch(e.repo, svcBranch) != nil {
				t.Errorf("PRs %+v or a branch exist", prs)
			}
			if list := e.containers(0, ""); len(list) != 0 {
				t.Errorf("%d sandbox containers were made", len(list))
			}
		})
	}
}

func TestServiceCancelsRunningRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ action, label string }{
		{"unlabeled", "frognano"},
		{"closed", ""},
	} {
		t.Run(tc.action, func(t *testing.T) {
			t.Parallel()
			e := svcSetup(t, "svc-sleep.json")
			p := e.start()
			id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
			agent := e.waitAgentContainer(id)
			// The agent is inside `sleep 600`: the model has been asked exactly once.
			svcWait(t, time.Minute, "the model's first turn", func() (bool, string) {
				n := len(e.model.Requests())
				return n == 1, fmt.Sprintf("%d requests", n)
			})

			// Labelling again while the run is active starts no second run; the run counts it.
			if again := e.deliver(p, "labeled", "frognano", svcMaintainer); again.Status != "already_active" || len(again.RunIDs) != 1 || again.RunIDs[0] != id {
				t.Errorf("second label answer = %+v, want already_active on run %d", again, id)
			}

			ans := e.deliver(p, tc.action, tc.label, svcMaintainer)
			if ans.Status != "cancelled" || len(ans.RunIDs) != 1 || ans.RunIDs[0] != id {
				t.Fatalf("issues.%s answer = %+v, want run %d cancelled", tc.action, ans, id)
			}
			start := time.Now()
			e.waitNoContainers(30 * time.Second)
			t.Logf("sandbox %s gone %s after the %s delivery", agent[:12], time.Since(start).Round(time.Millisecond), tc.action)

			row := e.waitState(id, 30*time.Second, "cancelled")
			if row.ExitReason != "cancelled" {
				t.Errorf("exit reason = %q", row.ExitReason)
			}
			svcWait(t, 30*time.Second, "the status comment to say cancelled", func() (bool, string) {
				c := e.onlyComment()
				return strings.Contains(c.Body, "was cancelled"), c.Body
			})
			golden.Check(t, "status-cancelled.md", svcNormalize(e.onlyComment().Body))
			if prs := e.gh.PRs(e.repo); len(prs) != 0 || e.gh.Branch(e.repo, svcBranch) != nil {
				t.Errorf("a cancelled run published: %+v", prs)
			}
			if n := len(e.model.Requests()); n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
		})
	}
}

func TestServicePublishRetriesAfterGitHub502(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		inject    func(*githubtest.Server)
		wantPosts int
	}{
		// GitHub refuses the create: nothing exists, the retry creates the PR.
		{"Refused", func(s *githubtest.Server) { s.FailNext("POST", "/repos/*/*/pulls", http.StatusBadGateway, nil, 1) }, 2},
		// GitHub creates the PR but the answer is lost: the retry must find it, not open a second
		// (a second POST would be answered 422 "already exists"; finding it first is cheaper).
		{"AnswerLost", func(s *githubtest.Server) { s.LoseNextResponse("POST", "/repos/*/*/pulls", http.StatusBadGateway, 1) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := svcSetup(t, "svc-pyaverage.json")
			tc.inject(e.gh)
			p := e.start()
			id := e.deliver(p, "labeled", "frognano", svcMaintainer).RunIDs[0]
			row := e.waitState(id, svcRunWait, "succeeded")

			prs := e.gh.PRs(e.repo)
			if len(prs) != 1 {
				t.Fatalf("%d PRs, want exactly 1: %+v", len(prs), prs)
			}
			if posts := e.gh.CountRequests("POST", "/repos/*/*/pulls"); posts != tc.wantPosts {
				t.Errorf("%d PR creations were tried, want %d", posts, tc.wantPosts)
			}
			if gets := e.gh.CountRequests("GET", "/repos/*/*/pulls"); gets < 1 {
				t.Error("after the 502 nobody looked for an existing PR")
			}
			if row.PRURL != prs[0].HTMLURL || !prs[0].Draft {
				t.Errorf("run links %q, PR %s draft %v", row.PRURL, prs[0].HTMLURL, prs[0].Draft)
			}
			svcWait(t, 30*time.Second, "the status comment to link the PR", func() (bool, string) {
				c := e.onlyComment()
				return strings.Contains(c.Body, prs[0].HTMLURL), c.Body
			})
		})
	}
}

// svcVolatile are the parts of a PR body that change from run to run.
var svcVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b[0-9a-f]{40}\b`), "<sha>"},
	{regexp.MustCompile(`\b[0-9a-f]{7,12}\.\.[0-9a-f]{7,12}\b`), "<sha>..<sha>"},
	{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ms|µs|s)\b`), "<dur>"},
	{regexp.MustCompile(`\b\d+h\d+m\b|\b\d+m\b`), "<dur>"},
	{regexp.MustCompile(`frognano run \d+`), "frognano run <id>"},
}

func svcNormalize(s string) string {
	for _, v := range svcVolatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}
