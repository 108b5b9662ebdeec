package main

import (
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/patch"
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
