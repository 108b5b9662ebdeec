package githubapp

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/fault"
)

// oldPermissions are what an installation made before check runs existed has granted: the core
// permissions, no checks and no actions.
var oldPermissions = map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read"}

// An installation that has not granted checks: write gets tokens without it (GitHub would
// refuse the whole token with 422 otherwise), a client that says check runs are off, and no
// check run on publish; once it approves the permission, the next client asks for it, with no
// restart.
func TestForRepoAsksOnlyForWhatTheInstallationGranted(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ChecksWrite = true })
	b.gh.SetInstallationPermissions(testInstallation, oldPermissions)
	c, err := b.app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatalf("ForRepo without checks: write: %v", err)
	}
	reqs := b.gh.TokenRequests()
	if got := reqs[len(reqs)-1].Permissions; !maps.Equal(got, oldPermissions) {
		t.Errorf("the token asked for %v, want exactly the granted core %v", got, oldPermissions)
	}
	if c.ChecksOn() || !c.ChecksWanted() || len(c.Grants().MissingCore()) != 0 {
		t.Errorf("ChecksOn %v, ChecksWanted %v, missing core %v", c.ChecksOn(), c.ChecksWanted(), c.Grants().MissingCore())
	}

	// Approved: the next client has it.
	b.gh.SetInstallationPermissions(testInstallation, map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "checks": "write"})
	c, err = b.app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatal(err)
	}
	reqs = b.gh.TokenRequests()
	if got := reqs[len(reqs)-1].Permissions; got["checks"] != "write" || !c.ChecksOn() {
		t.Errorf("after approval the token asked for %v (ChecksOn %v)", got, c.ChecksOn())
	}
}

// A missing core permission is reported, with whether the installation can still comment.
func TestForRepoReportsMissingCorePermissions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.SetInstallationPermissions(testInstallation, map[string]string{"contents": "read", "issues": "write", "metadata": "read"})
	c, err := b.app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatal(err)
	}
	missing := c.Grants().MissingCore()
	if want := []string{"contents: read, needs write", "pull_requests: none, needs write"}; strings.Join(missing, "|") != strings.Join(want, "|") {
		t.Errorf("missing %q, want %q", missing, want)
	}
	e := &MissingPermissionsError{Grants: c.Grants(), Missing: missing}
	if !e.CanComment() || !strings.Contains(e.Error(), "pull_requests: none, needs write") {
		t.Errorf("error %q, can comment %v", e, e.CanComment())
	}
	reqs := b.gh.TokenRequests()
	if got := reqs[len(reqs)-1].Permissions; got["contents"] != "read" || got["pull_requests"] != "" {
		t.Errorf("the token asked for %v: want what is granted, at the level granted", got)
	}
}

// A suspended installation is a permanent error that says how to undo it, before any token.
func TestForRepoOnASuspendedInstallation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.SuspendInstallation(testInstallation, true)
	before := len(b.gh.TokenRequests())
	_, err := b.app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	var se *SuspendedError
	if !errors.As(err, &se) || fault.IsTransient(err) || !strings.Contains(err.Error(), "unsuspend") {
		t.Fatalf("err = %v, want a permanent *SuspendedError", err)
	}
	if len(b.gh.TokenRequests()) != before {
		t.Error("a token was asked for on a suspended installation")
	}
}

// Without actions: read, a CI follow-up's checks come without logs and say why; no token is
// asked for that GitHub would refuse.
func TestFailedChecksWithoutActionsGrant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.SetInstallationPermissions(testInstallation, map[string]string{"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "checks": "read"})
	c, err := b.app.ForRepo(context.Background(), testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatal(err)
	}
	suite, _ := b.gh.AddCheckSuite(b.repo, strings.Repeat("c", 40), "github-actions",
		githubtest.CheckRunSpec{Name: "test", Conclusion: "failure", Summary: "pytest failed", Log: actionsLog})
	before := len(b.gh.TokenRequests())
	checks, _, err := c.FailedChecks(context.Background(), suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Log != "" || !strings.Contains(checks[0].LogNote, "has not granted actions: read") {
		t.Errorf("checks = %+v", checks)
	}
	for _, r := range b.gh.TokenRequests()[before:] {
		if r.Permissions["actions"] != "" {
			t.Errorf("a token was asked for actions: %v", r.Permissions)
		}
	}
}
