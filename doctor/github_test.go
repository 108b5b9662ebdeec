package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
)

// GitHub lists, per installation, what it lacks: a missing core permission fails (no run can
// work there); a missing optional permission or event, or a suspension, is a warning that says
// what runs skip; an installation with everything passes. Warnings are not failures.
func TestGitHubJudgesEachInstallation(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	full := gh.AddRepo("full-org", "api", map[string]string{"README": "x\n"})
	old := gh.AddRepo("old-org", "api", map[string]string{"README": "x\n"})
	broken := gh.AddRepo("broken-org", "api", map[string]string{"README": "x\n"})
	gh.AddInstallation(1, full)
	gh.AddInstallation(2, old)
	gh.AddInstallation(3, broken)
	gh.SetInstallationPermissions(2, map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"})
	gh.SetInstallationEvents(2, "issues", "issue_comment", "pull_request_review", "check_suite")
	gh.SetInstallationPermissions(3, map[string]string{"contents": "read", "issues": "write", "pull_requests": "write", "metadata": "read"})

	results := GitHub(context.Background(), githubapp.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, ChecksWrite: true})
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	for name, want := range map[string]struct {
		status Status
		has    []string
	}{
		"github-installation full-org":   {Pass, []string{"grants every permission and event"}},
		"github-installation old-org":    {Warn, []string{"actions: none, needs read", "checks: none, needs write", "pull_request_review_comment", "runs skip check runs"}},
		"github-installation broken-org": {Fail, []string{"contents: read, needs write", "no run can work there"}},
	} {
		r, ok := byName[name]
		if !ok {
			t.Errorf("no result %q in %+v", name, results)
			continue
		}
		if r.Status != want.status {
			t.Errorf("%s: %s (%s), want %s", name, r.Status, r.Detail, want.status)
		}
		for _, s := range want.has {
			if !strings.Contains(r.Detail, s) {
				t.Errorf("%s: %q lacks %q", name, r.Detail, s)
			}
		}
	}
	var out bytes.Buffer
	if failed := Write(&out, results); failed != 1 {
		t.Errorf("%d failed, want 1 (the warning is not a failure):\n%s", failed, out.String())
	}
	if !strings.Contains(out.String(), "warn github-installation old-org") || !strings.Contains(out.String(), "approves the App's requested permissions") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestGitHubSaysWhatToApproveForPullRequestEvents: an App that does not receive pull_request
// events still works (a warning, not a failure), and doctor says what to approve and that the
// outcomes come from reconciliation meanwhile.
func TestGitHubSaysWhatToApproveForPullRequestEvents(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	gh.AddInstallation(1, gh.AddRepo("octo-org", "api", map[string]string{"README": "x\n"}))
	gh.SetAppEvents(githubapp.RequiredEvents()...)

	results := GitHub(context.Background(), githubapp.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, ChecksWrite: true})
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	for _, name := range []string{"github-permissions", "github-installation octo-org"} {
		r := byName[name]
		if r.Status != Warn || !strings.Contains(r.Detail, "pull_request") || !strings.Contains(r.Detail, "found by reconciliation") {
			t.Errorf("%s: %s %q, want a warning naming pull_request and reconciliation", name, r.Status, r.Detail)
		}
	}
	if fix := byName["github-permissions"].Fix; !strings.Contains(fix, "Pull request") || !strings.Contains(fix, "accept") {
		t.Errorf("github-permissions says to do %q", fix)
	}
	var out bytes.Buffer
	if failed := Write(&out, results); failed != 0 {
		t.Errorf("%d failed, want none (a missing pull_request event is a warning):\n%s", failed, out.String())
	}
}
