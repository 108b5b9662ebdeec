package main

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/runner"
)

// TestRunSummaryWarnsOfTestConfiguration: the terminal summary of `frognano run` carries the
// same warning as the report when the patch can sway the tests (here, a conftest.py only).
func TestRunSummaryWarnsOfTestConfiguration(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+import pytest\n"
	p, err := patch.Sanitize([]byte(diff), patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := summaryLines(&runner.Result{Patch: p}, "out", time.Second)
	if !strings.Contains(got, "WARNING: the test result may not be trustworthy") || !strings.Contains(got, "frognano:   conftest.py (") {
		t.Errorf("summary lacks the warning:\n%s", got)
	}
	if got := summaryLines(&runner.Result{}, "out", time.Second); strings.Contains(got, "WARNING") {
		t.Errorf("a run without a patch warns:\n%s", got)
	}
}

// TestRunSummarySaysWhyThePatchWasRefused: a patch refused for what looks like a secret is
// named as such on the terminal, finding by finding (rule, file, line), never by value; under
// warn the kept patch gets a warning.
func TestRunSummarySaysWhyThePatchWasRefused(t *testing.T) {
	t.Parallel()
	found := []secrets.Finding{{Rule: "github-pat", File: "@octokit/auth-token/README.md", Line: 3}, {Rule: "private-key", File: "deploy/key\u202e.pem", Line: 1}}
	got := summaryLines(&runner.Result{SecretFindings: found, PatchLost: runner.NoPatchRefused}, "out", time.Second)
	for _, want := range []string{"frognano: patch: none: refused, it holds what looks like a secret (FROGNANO_SECRETS=block; out/report.md lists everything found):\n" +
		"frognano:   github-pat in @octokit/auth-token/README.md line 3\nfrognano:   private-key in deploy/key<U+202E>.pem line 1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	diff := "diff --git a/a.txt b/a.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"
	p, err := patch.Sanitize([]byte(diff), patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got = summaryLines(&runner.Result{Patch: p, SecretFindings: found[:1]}, "out", time.Second)
	if !strings.Contains(got, "frognano: WARNING: the patch holds what looks like a secret; it is kept because FROGNANO_SECRETS=warn:\nfrognano:   github-pat in @octokit/auth-token/README.md line 3\n") {
		t.Errorf("summary lacks the warning:\n%s", got)
	}
}
