package githubapp

import (
	"context"
	"errors"
	"maps"
	"os/exec"
	"slices"
	"testing"
)

// TestDefaultFileReadsTheDefaultBranchHead reads a file through the contents API at the
// default branch's head: a branch's newer content is not seen, a missing file is not found,
// and a directory is no file.
func TestDefaultFileReadsTheDefaultBranchHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.gh.PushCommit(b.repo, "main", ".github/frognano.yml", "attempts: 2\n", "settings")
	if out, err := exec.Command("git", "-C", b.repo.Dir, "branch", "feature", "main").CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v: %s", err, out)
	}
	b.gh.PushCommit(b.repo, "feature", ".github/frognano.yml", "attempts: 9\n", "raise on a branch")

	data, found, err := b.client.DefaultFile(ctx, ".github/frognano.yml")
	if err != nil || !found || string(data) != "attempts: 2\n" {
		t.Errorf("DefaultFile = %q, %v, %v; want the default branch's content", data, found, err)
	}
	if data, found, err := b.client.DefaultFile(ctx, ".github/none.yml"); err != nil || found || data != nil {
		t.Errorf("DefaultFile of a missing file = %q, %v, %v; want not found", data, found, err)
	}
	if _, _, err := b.client.DefaultFile(ctx, "calc"); !errors.Is(err, ErrNotAFile) {
		t.Errorf("DefaultFile of a directory: %v, want ErrNotAFile", err)
	}
}

// TestOrgFileReadsTheOrganisationsRepository reads the organisation's .github repository
// with a token that reaches only it, read-only, and finds nothing where the installation does
// not reach that repository.
func TestOrgFileReadsTheOrganisationsRepository(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if data, found, err := b.client.OrgFile(ctx, ".github", ".github/frognano.yml"); err != nil || found {
		t.Errorf("OrgFile without a .github repository = %q, %v, %v; want not found", data, found, err)
	}
	org := b.gh.AddRepo(testOwner, ".github", map[string]string{".github/frognano.yml": "label: org\n"})
	if data, found, err := b.client.OrgFile(ctx, ".github", ".github/frognano.yml"); err != nil || found {
		t.Errorf("OrgFile of a repository outside the installation = %q, %v, %v; want not found", data, found, err)
	}
	b.gh.AddInstallation(testInstallation, org)
	data, found, err := b.client.OrgFile(ctx, ".github", ".github/frognano.yml")
	if err != nil || !found || string(data) != "label: org\n" {
		t.Fatalf("OrgFile = %q, %v, %v; want the organisation's file", data, found, err)
	}
	reqs := b.gh.TokenRequests()
	last := reqs[len(reqs)-1]
	if want := map[string]string{"contents": "read", "metadata": "read"}; len(last.Repositories) != 1 || last.Repositories[0] != ".github" || !maps.Equal(last.Permissions, want) {
		t.Errorf("token request = %v %v, want [.github] %v", last.Repositories, last.Permissions, want)
	}
}

// TestTeamMember checks a team's active members with a token that asks for members: read, and
// says so when the installation has not granted it.
func TestTeamMember(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.client.TeamMember(ctx, "core", "ann"); !errors.Is(err, ErrNoMembersPermission) {
		t.Errorf("TeamMember without members: read: %v, want ErrNoMembersPermission", err)
	}
	perms := map[string]string{"contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read", "checks": "write", "members": "read"}
	b.gh.SetInstallationPermissions(testInstallation, perms)
	b.gh.SetTeamMembers(testOwner, "core", "ann")
	c, err := b.app.ForRepo(ctx, testInstallation, testOwner, testRepo)
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]bool{"ann": true, "ANN": true, "bob": false} {
		if got, err := c.TeamMember(ctx, "core", user); err != nil || got != want {
			t.Errorf("TeamMember(core, %s) = %v, %v; want %v", user, got, err, want)
		}
	}
	if got, err := c.TeamMember(ctx, "release", "ann"); err != nil || got {
		t.Errorf("TeamMember of a team with no members = %v, %v; want false", got, err)
	}
}

// TestPublishAddsTheSettingsLabelsAndReviewers: what a settings file's pull_request asks is
// added to the new pull request; a reviewer GitHub refuses (not a collaborator) is logged and
// does not keep the others from being asked, nor fail the publish.
func TestPublishAddsTheSettingsLabelsAndReviewers(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	b.gh.SetPermission(b.repo, "ann", "write")
	in.Labels, in.Reviewers, in.TeamReviewers = []string{"bot", "needs-review"}, []string{"stranger", "ann"}, []string{"core"}
	pub, err := b.client.Publish(context.Background(), in)
	number := pub.Number
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := b.gh.PRLabels(b.repo, number); !slices.Equal(got, []string{"bot", "needs-review"}) {
		t.Errorf("labels = %v, want [bot needs-review]", got)
	}
	if got := b.gh.RequestedReviewers(b.repo, number); !slices.Equal(got, []string{"ann"}) {
		t.Errorf("requested reviewers = %v, want [ann]", got)
	}
	if n := b.gh.CountRequests("POST", "/repos/*/*/pulls/*/requested_reviewers"); n != 3 {
		t.Errorf("%d review requests, want one per person and one for the teams", n)
	}
}
