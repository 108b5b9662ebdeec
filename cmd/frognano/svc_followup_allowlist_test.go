package main

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// TestServiceFollowUpSecretsAllowListIsTheBaseBranchs: the base branch's .gitleaks.toml lets
// fixtures/ through, and a writer's follow-up asks for a test key there. The runner scans with
// the base branch's allow-list, and so must Publish: it used to get none for a follow-up (its
// BaseSHA is frognano's own branch), so the patch the runner kept was refused at the push.
func TestServiceFollowUpSecretsAllowListIsTheBaseBranchs(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-followup-allowlist.json")
	e.env["FROGNANO_SECRETS"] = "block"
	e.gh.PushCommit(e.repo, "main", ".gitleaks.toml", "[[allowlists]]\ndescription = \"test fixtures\"\npaths = ['''^fixtures/''']\n", "allow test fixtures")
	p := e.start()

	first, pr := e.firstPR(p)
	writer := e.comment(p, pr.Number, svcMaintainer, "@"+githubtest.AppSlug+" please add a test key under fixtures/")
	row := e.waitState(writer.RunIDs[0], svcRunWait, "succeeded")
	head := e.gh.Branch(e.repo, svcBranch)
	if len(head.Parents) != 1 || head.Parents[0] != first.SHA || !strings.Contains(head.Files["fixtures/test_key.pem"], "PRIVATE KEY-----") {
		t.Fatalf("the follow-up's fixture was not pushed (head %s, parents %v):\n%s", head.SHA, head.Parents, svcTail(row.Report, 3000))
	}
}
