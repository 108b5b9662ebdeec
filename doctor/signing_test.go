package doctor

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
)

// An operator's commit identity makes frognano's commits unsigned: doctor warns and says how to
// have them signed; without one it passes.
func TestCommitSigning(t *testing.T) {
	t.Parallel()
	if r := CommitSigning(githubapp.Config{}); r.Status != Pass || !strings.Contains(r.Detail, "signs them") {
		t.Errorf("no identity: %s %s", r.Status, r.Detail)
	}
	for _, cfg := range []githubapp.Config{{CommitName: "Bot"}, {CommitEmail: "bot@example.com"}} {
		r := CommitSigning(cfg)
		if r.Status != Warn || !strings.Contains(r.Detail, "NOT signed") || !strings.Contains(r.Fix, "unset FROGNANO_COMMIT_NAME") {
			t.Errorf("%+v: %s %s (fix %q)", cfg, r.Status, r.Detail, r.Fix)
		}
	}
}
