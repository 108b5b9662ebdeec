package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
)

// hostileScanResult is a result whose scanners wrote hostile text: markup, mentions, links,
// a pipe that would end a table cell, invisible characters and a token, in rules, messages,
// paths and a crashed scanner's output.
func hostileScanResult(t *testing.T) *runner.Result {
	token := "ghp_" + strings.Repeat("e", 36)
	r := hostileResult(t)
	r.ScannerFailLevel = scanner.FailWarning
	r.Scanners = []audit.ScannerRun{
		{Name: "semgrep", ExitCode: 1, Duration: 3200 * time.Millisecond,
			Code: scanner.CodeJudgement{Code: scanner.CodeNone, Why: "frognano knows semgrep not to"}, Tools: []string{"semgrep"},
			Config: []string{".gitignore", ".semgrep.yml", ".semgrep/", ".semgrepignore"}, ConfigFrom: strings.Repeat("ab", 20),
			Reset: []scanner.Reset{
				{Path: ".semgrepignore", InBase: true, InPatched: true},
				{Path: "src/`x`|<b>/.semgrepignore", InPatched: true},
				{Path: "docs/.gitignore", InBase: true},
				{Path: "cfg/.semgrepignore", InBase: true, Kept: true},
			},
			Findings: scanner.Findings{Kept: []scanner.Finding{
				{Rule: "python.lang.security.audit.eval-detected", Level: scanner.LevelWarning, File: "src/app.py", Line: 3, EndLine: 5,
					Message: "Detected eval(); <img src=x onerror=alert(1)> @octocat closes #12 see https://evil.example"},
				{Rule: "rule|`pipe`", Level: scanner.LevelError, File: "docs/<script>|a.md", Line: 1, EndLine: 1,
					Message: "token " + token + " hard-coded \u202eevil"},
				{Rule: "", Level: scanner.LevelNote, File: "src/app\u202eyp.py", Line: 7, EndLine: 7, Message: ""},
			}, Elsewhere: 12, Unplaced: 1}},
		{Name: "crasher", ExitCode: 2, Duration: 800 * time.Millisecond, Problem: "crashed: exited 2 and wrote no SARIF; no findings taken",
			Code:  scanner.CodeJudgement{Code: scanner.CodeRuns, Why: "eslint runs JavaScript configuration files and loads plugins, parsers and rules, which may be files of the repository"},
			Tools: []string{"eslint"}, Config: []string{".eslintrc", ".eslintrc.*"}, ConfigFrom: strings.Repeat("cd", 20),
			Tail: "Traceback <b>(most recent call last)</b>\n```\nValueError: " + token + "\n"},
		{Name: "slow", ExitCode: -1, Duration: 2 * time.Minute, Problem: "timed out after 2m0s; no findings taken"},
	}
	r.Suppressions = []scanner.Suppression{
		{File: "src/app.py", Line: 3, Kind: "nosemgrep", For: "Semgrep", Text: "nosemgrep: python.lang.security.audit.eval-detected"},
		{File: "docs/<script>|a.md", Line: 9, Kind: "nosec", For: "Bandit, gosec", Text: "nosec `B602`|" + token},
		{File: "src/app\u202eyp.py", Line: 7, Kind: "eslint-disable", For: "ESLint", Text: "eslint-disable-line <img src=x onerror=alert(1)>"},
	}
	r.SuppressionsMore = 2
	return r
}

// section is the Scanners section of a rendering.
func section(md string) string { return sectionNamed(md, "Scanners") }

// sectionNamed is the section "## name" of a rendering.
func sectionNamed(md, name string) string {
	_, s, ok := strings.Cut(md, "## "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(s, "\n## "); i >= 0 {
		s = s[:i+1]
	}
	return "## " + name + "\n" + s
}

// TestScannersSectionGolden pins the Scanners section of report.md (with the crashed scanner's
// output) and of the PR body, as markdown and as GitHub shows it, inert and redacted, and the
// check run's annotations.
func TestScannersSectionGolden(t *testing.T) {
	t.Parallel()
	r := hostileScanResult(t)
	token := "ghp_" + strings.Repeat("e", 36)
	report := section(githubapp.Redact(Markdown(r)))
	body := section(PRBody(r, Fit{Redact: githubapp.Redact}))
	golden.Check(t, "runner-scanners-report.md", report)
	golden.Check(t, "runner-scanners-pr-body.md", body)
	golden.Check(t, "runner-scanners-pr-body.html", githubtest.ShowAsGitHub(body))
	checkInert(t, report, 1) // the crashed scanner's output
	checkInert(t, body, 0)
	check := Check(r, githubapp.Redact)
	if check.Conclusion != CheckFailure || !strings.HasPrefix(check.Title, "2 scanner finding(s) at level warning or above") {
		t.Errorf("check = %s %q", check.Conclusion, check.Title)
	}
	if !strings.Contains(check.Summary, section(PRBody(r, Fit{Redact: githubapp.Redact}))[:200]) {
		t.Errorf("the check summary lacks the Scanners section:\n%s", check.Summary)
	}
	ann, err := json.MarshalIndent(check.Annotations, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "runner-scanners-annotations.json", string(ann)+"\n")
	for name, s := range map[string]string{"report": report, "PR body": body, "summary": check.Summary, "annotations": string(ann)} {
		if strings.Contains(s, token) {
			t.Errorf("the %s hold a token", name)
		}
	}
	if strings.Contains(body, "Traceback") {
		t.Error("the PR body holds a failed scanner's output")
	}
}

// TestScannerAnnotationsCapped: at most 200 annotations, the most severe first, each within
// the Checks API's limits.
func TestScannerAnnotationsCapped(t *testing.T) {
	t.Parallel()
	r := &runner.Result{Scanners: []audit.ScannerRun{{Name: "a"}, {Name: "b"}}}
	for i := range 150 {
		r.Scanners[0].Kept = append(r.Scanners[0].Kept, scanner.Finding{Rule: strings.Repeat("r", 300), Level: scanner.LevelNote, File: "f.py", Line: i + 1, EndLine: i + 1, Message: strings.Repeat("m", 5000)})
		r.Scanners[1].Kept = append(r.Scanners[1].Kept, scanner.Finding{Rule: "x", Level: scanner.LevelError, File: "g.py", Line: i + 1, EndLine: i + 1, Message: "m"})
	}
	a := Annotations(r, nil)
	if len(a) != maxAnnotations || a[0].Path != "g.py" || a[149].Path != "g.py" || a[150].Path != "f.py" || a[0].Level != AnnotationFailure || a[150].Level != AnnotationNotice {
		t.Fatalf("%d annotations; first %+v", len(a), a[0])
	}
	for _, x := range a {
		if runeLen(x.Title) > 255 || runeLen(x.Message) > 2000 || x.EndLine < x.StartLine {
			t.Fatalf("out of the API's limits: title %d, message %d characters", runeLen(x.Title), runeLen(x.Message))
		}
	}
	// The report lists twice its notes' count and says how many more.
	if md := Markdown(r); strings.Count(md, "\n- **") != 40 || !strings.Contains(md, "- and 260 more") {
		t.Errorf("the report lists %d findings", strings.Count(md, "\n- **"))
	}
}

// TestSuppressionsSectionGolden pins the Suppression comments section of report.md and of the
// PR body (markdown, and as GitHub shows it): the patch's paths and directives are inert code
// spans in a table, redacted; the check run annotates each as a warning when a scanner is
// configured, after the findings, and not when none is.
func TestSuppressionsSectionGolden(t *testing.T) {
	t.Parallel()
	r := hostileScanResult(t)
	token := "ghp_" + strings.Repeat("e", 36)
	report := sectionNamed(githubapp.Redact(Markdown(r)), "Suppression comments")
	body := sectionNamed(PRBody(r, Fit{Redact: githubapp.Redact}), "Suppression comments")
	golden.Check(t, "runner-suppressions-report.md", report)
	golden.Check(t, "runner-suppressions-pr-body.html", githubtest.ShowAsGitHub(body))
	checkInert(t, body, 0)
	if !strings.Contains(report, "| `src/app.py` | 3 | `nosemgrep: python.lang.security.audit.eval-detected` | Semgrep |") ||
		!strings.Contains(report, "And 2 more, not kept.") {
		t.Errorf("the section does not list the comments:\n%s", report)
	}
	check := Check(r, githubapp.Redact)
	if !strings.Contains(check.Summary, "## Suppression comments") || !strings.Contains(Headline(r), "**The patch adds 5 suppression comment(s)**") {
		t.Errorf("the summary or the headline lacks the comments:\n%s\n%s", check.Summary, Headline(r))
	}
	var sup []CheckAnnotation
	for _, a := range check.Annotations {
		if strings.HasPrefix(a.Title, "suppression comment: ") {
			sup = append(sup, a)
		}
	}
	if len(sup) != 3 || sup[0].Path != "src/app.py" || sup[0].StartLine != 3 || sup[0].Level != AnnotationWarning ||
		check.Annotations[len(check.Annotations)-1] != sup[2] {
		t.Errorf("suppression annotations %+v", sup)
	}
	for name, s := range map[string]string{"report": report, "PR body": body, "summary": check.Summary, "annotations": fmt.Sprint(check.Annotations)} {
		if strings.Contains(s, token) {
			t.Errorf("the %s hold a token", name)
		}
	}
	// Without a scanner the comments are listed all the same, and annotate nothing.
	r.Scanners = nil
	if md := Markdown(r); !strings.Contains(md, "## Suppression comments") {
		t.Error("without scanners the report does not list the comments")
	}
	if a := Annotations(r, githubapp.Redact); len(a) != 0 {
		t.Errorf("without scanners: %d annotations", len(a))
	}
}

// TestAnnotationsShareTheirBound: suppression comments take at most 50 of the 200 annotations
// and come after the findings, which keep the rest.
func TestAnnotationsShareTheirBound(t *testing.T) {
	t.Parallel()
	r := &runner.Result{Scanners: []audit.ScannerRun{{Name: "a"}}}
	for i := range 300 {
		r.Scanners[0].Kept = append(r.Scanners[0].Kept, scanner.Finding{Rule: "x", Level: scanner.LevelError, File: "g.py", Line: i + 1, EndLine: i + 1})
		r.Suppressions = append(r.Suppressions, scanner.Suppression{File: "s.py", Line: i + 1, Kind: "nosec", For: "Bandit", Text: "nosec"})
	}
	a := Annotations(r, nil)
	if len(a) != maxAnnotations || a[149].Path != "g.py" || a[150].Path != "s.py" || a[199].Title != "suppression comment: nosec" {
		t.Errorf("%d annotations: %+v ... %+v", len(a), a[149], a[150])
	}
}

// TestScannerOwnFailuresShown: a scanner whose SARIF says it could not scan everything (a
// file of the patch it could not parse, skipped, and exit 0) read as a clean "0"; the row now
// says what its log reports, and names the files.
func TestScannerOwnFailuresShown(t *testing.T) {
	t.Parallel()
	r := &runner.Result{Scanners: []audit.ScannerRun{{Name: "bandit", Findings: scanner.Findings{Failed: 2, FailedFiles: []string{"app/skipped.py"}}}}}
	for name, s := range map[string]string{"report": Markdown(r), "PR body": PRBody(r, Fit{Redact: githubapp.Redact})} {
		sec := section(s)
		if !strings.Contains(sec, "reports 2 errors of its own run**") || !strings.Contains(sec, "`app/skipped.py`") {
			t.Errorf("the %s does not say the scanner failed in part:\n%s", name, sec)
		}
	}
}
