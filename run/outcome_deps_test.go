package run

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner"
)

// TestOutcomeShowsDependencies: what check/deps found reaches every text the pipeline
// publishes or stores (the PR body, the status comment's summary and headline, the check run
// and the report the run page shows), redacted by githubapp's redactor.
func TestOutcomeShowsDependencies(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("b", 36)
	res := &runner.Result{
		RunID: "run-2", Patch: &patch.Checked{Diff: []byte("diff --git a/requirements.txt b/requirements.txt\n")},
		Dependencies: &deps.Report{
			Files: []string{"requirements.txt"}, VulnData: true, VulnChecked: []string{"PyPI"},
			Changes: []deps.Change{{
				File: "requirements.txt", Ecosystem: "PyPI", Name: "attrs", Kind: deps.Changed,
				Old:   []deps.Package{{Ecosystem: "PyPI", Name: "attrs", Version: "21.4.0"}},
				New:   []deps.Package{{Ecosystem: "PyPI", Name: "attrs", Version: "22.2.0"}},
				Vulns: []deps.Vuln{{ID: "FROG-2026-0001", Version: "22.2.0", Fixed: []string{"22.2.1"}, Summary: "leaks " + token}},
			}},
		},
	}
	out, err := OutcomeOf(res, RunSpec{Issue: 3})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"PR body": out.PRBody, "summary": out.Summary, "headline": out.Headline, "report": out.Report,
		"check run summary": out.Check.Summary, "check run title": out.Check.Title,
	} {
		if !strings.Contains(text, "FROG-2026-0001") && !strings.Contains(text, "Known vulnerabilities in 1 new dependency version") {
			t.Errorf("the %s does not show the known vulnerability:\n%s", name, text)
		}
		if strings.Contains(text, token) {
			t.Errorf("the %s holds a token", name)
		}
	}
}
