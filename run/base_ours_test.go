package run_test

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
	"github.com/frognano/frognano/settings"
)

// TestNoRunIsBasedOnFrognanosOwnBranch: a run takes its secret check's allow-lists, its
// scanners' configuration and its network-enabled setup script from its base. frognano's own
// branches (frognano/issue-N) hold a patch a model wrote, so none is ever a base: not as the
// settings' base_branch, not as the base of a pull request a run works on (a follow-up on
// frognano's pull request that targets another of frognano's branches, a mention on a person's
// pull request that does). Each run ends skipped with a note saying why, before any clone and
// before the agent. (base= asked at trigger is refused when it is parsed: TestParseOptions,
// TestMentionRefusals.)
func TestNoRunIsBasedOnFrognanosOwnBranch(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, p *runtest.Pipeline, id int64, base string) {
		t.Helper()
		if r := p.Work(t, id, 1); !r.Completed() {
			t.Fatal(r)
		}
		p.RequireState(t, id, run.StateSkipped)
		if p.Runner.Calls() != 0 || p.Repo.Clones() != 0 || len(p.Repo.BranchClones()) != 0 || len(p.Repo.Publishes()) != 0 {
			t.Errorf("%d agent runs, %d clones, branch clones %q, %d publishes: want none",
				p.Runner.Calls(), p.Repo.Clones(), p.Repo.BranchClones(), len(p.Repo.Publishes()))
		}
		said := strings.Join(p.Repo.Comments(), "\n")
		if len(p.Repo.Edits()) > 0 {
			said = p.Repo.LastEdit().Body
		}
		if want := "`" + base + "` is frognano's own branch"; !strings.Contains(said, want) {
			t.Errorf("the run's comment lacks %q:\n%s", want, said)
		}
	}
	t.Run("SettingsBaseBranch", func(t *testing.T) {
		t.Parallel()
		p := runtest.New(t)
		p.Repo.Files = map[string]string{settings.Path: "base_branch: Frognano/issue-4\n"}
		id := p.Request(t, runtest.Request{Issue: 7, Labeler: "maintainer"})
		check(t, p, id, "Frognano/issue-4")
	})
	for _, tc := range []struct{ name, head string }{
		{"FollowUpOnAPullRequestOntoFrognanosBranch", "frognano/issue-7"},
		{"MentionOnAPersonsPullRequestOntoFrognanosBranch", "feature/pager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := runtest.New(t)
			p.Repo.PR.HeadRef, p.Repo.PR.BaseRef = tc.head, "frognano/issue-4"
			id := followUp(t, p, "reviewer", "@frognano please add tests")
			check(t, p, id, "frognano/issue-4")
		})
	}
}
