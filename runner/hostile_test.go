package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// hostileScript loads testdata/hostile/NAME: a scripted model that attacks the harness.
func hostileScript(t *testing.T, name string) leaftest.Script {
	t.Helper()
	return leaftest.Load(t, filepath.Join(leaftest.ModelsDir(t), "..", "hostile", name))
}

// TestHostileDiffTaking runs testdata/hostile/diff-filter-and-leftover.json in the real
// sandbox: a clean filter, attributes, rename detection and a background process that writes
// a forged diff into git's stdout. The patch holds the honest changes only, and still applies
// for the tests after.
func TestHostileDiffTaking(t *testing.T) {
	t.Parallel()
	b := setupWith(t, "pyaverage", hostileScript(t, "diff-filter-and-leftover.json"), sandbox.DefaultImage)
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
	p := string(res.PatchBytes())
	for _, want := range []string{
		"+    return total(xs) / len(xs)",
		"diff --git a/README.md b/README.md\ndeleted file mode 100644",
		"diff --git a/README.txt b/README.txt\nnew file mode 100644",
		"+*.py filter=evil",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("patch lacks %q:\n%s", want, p)
		}
	}
	for _, bad := range []string{"FORGED", "etc/passwd", "120000", "rename from"} {
		if strings.Contains(p, bad) {
			t.Errorf("patch holds %q:\n%s", bad, p)
		}
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "patch") {
			t.Errorf("note: %s", n)
		}
	}
	if res.TestsAfter == nil || !res.TestsAfter.PatchApplied || res.TestsAfter.ExitCode != 0 {
		t.Errorf("tests after: %+v", res.TestsAfter)
	}
}

// TestHostileShadowedTestRunner runs testdata/hostile/shadow-pytest.json: the model replaces
// pytest with a pytest.py of its own that reports every test as passing. The after-run does
// turn green, so the result must say, in plain words, that it may not be trustworthy.
func TestHostileShadowedTestRunner(t *testing.T) {
	t.Parallel()
	b := setupWith(t, "pyaverage", hostileScript(t, "shadow-pytest.json"), sandbox.DefaultImage)
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestsAfter == nil || res.TestsAfter.ExitCode != 0 {
		t.Fatalf("precondition: the fake pytest should turn the after-run green: %+v", res.TestsAfter)
	}
	trust := res.TestTrust()
	if len(trust) != 1 || trust[0].Path != "pytest.py" || !strings.Contains(trust[0].Why, `"pytest"`) {
		t.Fatalf("TestTrust = %+v, want pytest.py flagged", trust)
	}
	for name, text := range map[string]string{"headline": report.Headline(res), "report": report.Markdown(res), "PR body": report.PRBody(res, report.Fit{})} {
		if !strings.Contains(text, "may not be trustworthy") || !strings.Contains(text, "pytest.py") {
			t.Errorf("the %s does not warn:\n%s", name, text)
		}
	}
}

// TestHostileDiffCommonDir runs testdata/hostile/diff-commondir.json: a clean filter planted
// in a common directory that .git/commondir points at must not run when the diff is taken.
func TestHostileDiffCommonDir(t *testing.T) {
	t.Parallel()
	b := setupWith(t, "pyaverage", hostileScript(t, "diff-commondir.json"), sandbox.DefaultImage)
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := string(res.PatchBytes())
	// The model's own files (.gc/...) are in the patch; the filter's output must not be.
	if !strings.Contains(p, "+    return total(xs) / len(xs)") || strings.Contains(p, "\n+FORGED-BY-A-FILTER\n") {
		t.Fatalf("the patch is not the honest fix (notes %q):\n%s", res.Notes, p)
	}
	if res.TestsAfter == nil || !res.TestsAfter.PatchApplied || res.TestsAfter.ExitCode != 0 {
		t.Errorf("tests after: %+v", res.TestsAfter)
	}
}
