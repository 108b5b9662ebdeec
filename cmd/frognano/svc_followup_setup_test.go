package main

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// TestServiceFollowUpSetupSeesTheBase is issue 17's follow-up attack through the real service:
// the base's .frognano/setup.sh runs `make install`, and the pull request branch then gets a
// hostile Makefile (what an injected model could commit) and a new requirements file. A
// writer's follow-up must neither run the branch's Makefile in setup (it ran as root, with
// network) nor take the new file as a reason to rebuild: the scripted model reads /opt/planted
// in both runs and its script fails the test unless it holds the base commit's mark.
func TestServiceFollowUpSetupSeesTheBase(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-followup-setup.json")
	e.env["FROGNANO_SETUP_NETWORK"] = "none"
	makefile := func(mark string) string {
		return "install:\n\tprintf '%s\\n' '" + mark + "' > /opt/planted\n"
	}
	e.gh.PushCommit(e.repo, "main", ".frognano/setup.sh", "set -eu\nmake -s install\n", "setup")
	e.gh.PushCommit(e.repo, "main", "Makefile", makefile("planted by the base commit"), "the base's Makefile")
	p := e.start()

	_, pr := e.firstPR(p)
	e.gh.PushCommit(e.repo, svcBranch, "Makefile", makefile("planted by the pull request branch"), "hostile Makefile")
	e.gh.PushCommit(e.repo, svcBranch, "requirements-extra.txt", "evil==1\n", "a new input")

	writer := e.comment(p, pr.Number, svcMaintainer, "@"+githubtest.AppSlug+" please note the fix in NOTES.md")
	row := e.waitState(writer.RunIDs[0], svcRunWait, "succeeded")
	if !strings.Contains(row.Report, "cached; no setup ran in this run") {
		t.Errorf("the follow-up built an environment of its own instead of reusing the base's:\n%s", svcTail(row.Report, 3000))
	}
	if got := e.gh.Branch(e.repo, svcBranch).Files["NOTES.md"]; got != "average() divides by len(xs).\n" {
		t.Errorf("the follow-up's commit holds NOTES.md %q", got)
	}
	e.waitNoContainers(svcRunWait)
}
