package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/leaf"
)

// silenceBase is what the base branch of the attack holds besides pyaverage: a .semgrepignore
// (fake-sast honours it as semgrep does), a .gitignore, and the repository's plugin for
// fake-sast, which its plugins mode imports as pylint imports the plugins its configuration
// names.
var silenceBase = map[string]string{
	".semgrepignore":                "docs/\n",
	".gitignore":                    "generated/\n",
	"fake_sast_plugins/__init__.py": "\"\"\"The repository's plugin for fake-sast: it adds no rule.\"\"\"\n",
}

// silenceScanners are the operator's scanners of the attack, all in the scan image and all in
// the syntax every version of FROGNANO_SCANNERS reads: semgrep (fake-sast under that name, so
// frognano's knowledge of semgrep applies), fake-sast by its own name (a tool frognano does
// not know, no configuration file named: the control, which the patch does silence), pylint
// (fake-sast loading the repository's plugins), `python3 -m bandit` (fake-sast installed as
// the module bandit) and semgrep listing the files with git, as semgrep does.
const silenceScanners = "sast=semgrep ok {sarif};; plain=fake-sast ok {sarif};; lint=pylint plugins {sarif};; mod=python3 -m bandit ok {sarif};; gitsast=semgrep git {sarif}"

func parseScanners(t *testing.T, s string) []scanner.Scanner {
	t.Helper()
	list, err := scanner.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestScannersCannotBeSilencedByThePatch runs testdata/hostile/silence-scanners.json: besides
// its fix, the patch (a) writes a nosemgrep comment on a flagged line, (b) rewrites the base's
// .semgrepignore to skip the fixed file, (c) adds a flagged file and a nested .semgrepignore
// that skips it, (d) makes the plugin a scanner loads from the repository overwrite its SARIF,
// (e) adds a bandit/ package that `python3 -m bandit` would run instead of the scanner, and (f)
// drops the base's .gitignore rule and adds a file under it. Each subtest is one attack; each
// but the last failed before configuration files came from the base, suppression comments were
// listed, the report said what a scanner running the repository's code cannot promise, and
// scanners ran with Python's safe path. (f) held before (the scanner read the patch's
// .gitignore); it guards the reset, which puts the base's rule back: the new file is tracked.
func TestScannersCannotBeSilencedByThePatch(t *testing.T) {
	t.Parallel()
	scanImage := buildScanImage(t)
	list := parseScanners(t, silenceScanners)
	b := setupWith(t, "pyaverage", hostileScript(t, "silence-scanners.json"), scanImage, func(c *runner.Config) {
		c.Scanners, c.ScannerTimeout = list, 2*time.Minute
	})
	gittest.Write(t, b.spec.RepoDir, silenceBase)
	gittest.Git(t, b.spec.RepoDir, "add", "-A")
	gittest.In(t, b.spec.RepoDir)("commit", "-q", "-m", "a .semgrepignore and fake-sast's plugin")
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent || res.PatchBytes() == nil || len(res.Scanners) != 5 {
		t.Fatalf("exit reason %q, patch %d bytes, %d scanners (notes %q)", got, len(res.PatchBytes()), len(res.Scanners), res.Notes)
	}
	if left := containersOf(t, b.spec.RunID); len(left) != 0 {
		t.Errorf("%d sandboxes left after the run", len(left))
	}
	scan := map[string]audit.ScannerRun{}
	for _, s := range res.Scanners {
		if s.Problem != "" {
			t.Errorf("scanner %s: %s\n%s", s.Name, s.Problem, s.Tail)
		}
		var kept []string
		for _, f := range s.Kept {
			kept = append(kept, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Rule))
		}
		t.Logf("scanner %s: exit %d, kept %q, %d elsewhere", s.Name, s.ExitCode, kept, s.Elsewhere)
		scan[s.Name] = s
	}
	found := func(name, file string, line int) bool {
		for _, f := range scan[name].Kept {
			if f.File == file && f.Line == line && f.Rule == "fake.division" {
				return true
			}
		}
		return false
	}
	md, body, check := report.Markdown(res), report.PRBody(res, report.Fit{}), report.Check(res, nil)

	t.Run("Control", func(t *testing.T) {
		// fake-sast by its own name honours the patched tree's .semgrepignore files: the
		// attacks are real, and silence a scanner whose configuration nobody named.
		if found("plain", "stats/basic.py", 16) || found("plain", "lib/c.py", 1) {
			t.Errorf("the control scanner was not silenced: %+v", scan["plain"].Kept)
		}
		if !strings.Contains(md, "- `plain` frognano does not know whether it runs the repository's code") ||
			!strings.Contains(md, "no configuration file is named for it, so the patch's changes to its configuration count") {
			t.Error("the report does not say what the control scanner cannot promise")
		}
	})
	t.Run("SuppressionComment", func(t *testing.T) { // (a)
		row := "| `stats/ratio.py` | 1 | `nosemgrep` | Semgrep |"
		for name, text := range map[string]string{"report": md, "PR body": body, "check summary": check.Summary} {
			if !strings.Contains(text, "## Suppression comments") || !strings.Contains(text, row) {
				t.Errorf("the %s does not list the nosemgrep comment", name)
			}
		}
		var annotated bool
		for _, a := range check.Annotations {
			annotated = annotated || (a.Path == "stats/ratio.py" && a.StartLine == 1 && a.Level == report.AnnotationWarning &&
				a.Title == "suppression comment: nosemgrep")
		}
		if !annotated {
			t.Errorf("no annotation of the nosemgrep comment: %+v", check.Annotations)
		}
		if !strings.Contains(report.Headline(res), "**The patch adds 1 suppression comment(s)**") {
			t.Errorf("the headline does not say it: %s", report.Headline(res))
		}
	})
	t.Run("RewrittenConfiguration", func(t *testing.T) { // (b)
		if !found("sast", "stats/basic.py", 16) {
			t.Errorf("semgrep read the patch's .semgrepignore: the fixed line's finding is gone: %+v", scan["sast"].Kept)
		}
		if !strings.Contains(md, "`.semgrepignore` (changed: scanned as the base has it)") {
			t.Error("the report does not say that .semgrepignore was reset")
		}
	})
	t.Run("NestedConfiguration", func(t *testing.T) { // (c)
		if !found("sast", "lib/c.py", 1) {
			t.Errorf("semgrep read the patch's lib/.semgrepignore: %+v", scan["sast"].Kept)
		}
		if !strings.Contains(md, "`lib/.semgrepignore` (added by the patch: left out)") {
			t.Error("the report does not say that lib/.semgrepignore was left out")
		}
	})
	t.Run("RepositoryCodeForgesTheSARIF", func(t *testing.T) { // (d): not promised, and said so
		// The attack works: nothing in the sandbox is out of reach of code the scanner runs.
		if len(scan["lint"].Kept) != 0 || scan["lint"].Elsewhere != 0 {
			t.Errorf("the plugin did not forge the SARIF: %+v", scan["lint"].Findings)
		}
		for _, w := range []string{"- `lint` **runs the repository's code** (pylint imports the plugins",
			"so its findings, and the absence of any, are not promised"} {
			if !strings.Contains(md, w) || !strings.Contains(body, w) {
				t.Errorf("the report and PR body do not say %q", w)
			}
		}
		if !strings.Contains(md, "- `sast` does not run the repository's code (frognano knows semgrep not to)") {
			t.Error("the report does not say what semgrep's result can be trusted for")
		}
	})
	t.Run("IgnoredNewFile", func(t *testing.T) { // (f)
		if !found("gitsast", "generated/report.py", 1) {
			t.Errorf("semgrep listing files with git skipped the patch's new file: %+v", scan["gitsast"].Kept)
		}
		if !strings.Contains(md, "- `gitsast` does not run the repository's code (frognano knows semgrep not to); its configuration files are the base's, whole (`") ||
			!strings.Contains(md, "`.gitignore` (changed: scanned as the base has it)") {
			t.Error("the report does not say that .gitignore was reset")
		}
	})
	t.Run("ShadowedModule", func(t *testing.T) { // (e)
		mod := scan["mod"]
		if mod.ExitCode != 1 || mod.Elsewhere == 0 {
			t.Errorf("python3 -m bandit ran the patch's bandit/: exit %d, %d findings elsewhere", mod.ExitCode, mod.Elsewhere)
		}
	})

	// What the checks found, as a reviewer reads it: the Scanners and Suppression comments
	// sections of report.md.
	i, j := strings.Index(md, "## Scanners"), strings.Index(md, "## Files changed")
	if i < 0 || j < i {
		t.Fatalf("report.md lacks its sections:\n%s", md)
	}
	golden.Check(t, "runner-scanners-silenced-report.md", stable(md[i:j], b.spec.RunID))
}

// TestScannersSeeOddNamesAndGeneratedMarkers runs testdata/hostile/hide-from-scanners-by-name.json:
// a scanner's findings in a file whose name holds a space or '#' are kept, under the file's
// name, and the generated-file marker and the .gitattributes lines the patch writes are listed
// among the suppressions. Before, both findings were dropped (the space's file was named with
// git's tab; the '#' read as the uri's fragment) and neither the marker nor the attributes
// were listed.
func TestScannersSeeOddNamesAndGeneratedMarkers(t *testing.T) {
	t.Parallel()
	scanImage := buildScanImage(t)
	b := setupWith(t, "pyaverage", hostileScript(t, "hide-from-scanners-by-name.json"), scanImage, func(c *runner.Config) {
		c.Scanners, c.ScannerTimeout = parseScanners(t, "sast=semgrep ok {sarif}"), 2*time.Minute
	})
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.PatchBytes() == nil || len(res.Scanners) != 1 || res.Scanners[0].Problem != "" {
		t.Fatalf("patch %d bytes, scanners %+v (notes %q)", len(res.PatchBytes()), res.Scanners, res.Notes)
	}
	var kept []string
	for _, f := range res.Scanners[0].Kept {
		if f.Rule == "fake.division" {
			kept = append(kept, fmt.Sprintf("%s:%d", f.File, f.Line))
		}
	}
	if got, want := strings.Join(kept, " "), "stats/my ratio.py:3 stats/odd#name.py:3"; got != want {
		t.Errorf("division findings kept: %q, want %q", got, want)
	}
	md := report.Markdown(res)
	for _, row := range []string{
		"| `stats/gen_api.py` | 1 | `Code generated by protoc-gen-py. DO NOT EDIT.` |",
		"| `.gitattributes` | 1 | `linguist-generated` | GitHub",
		"| `.gitattributes` | 2 | `-diff` | git and GitHub",
	} {
		if !strings.Contains(md, row) {
			t.Errorf("report.md lacks %q:\n%s", row, md)
		}
	}
	var annotated bool
	for _, a := range report.Check(res, nil).Annotations {
		annotated = annotated || a.Path == "stats/my ratio.py" && a.StartLine == 3
	}
	if !annotated {
		t.Error("no annotation of the finding in stats/my ratio.py")
	}
}
