package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
)

// This file renders what the operator's scanners found (audit.Auditor.Scanners): the
// "Scanners" section of report.md, the PR body and the check run's summary, the check run's
// annotations, and what the findings do to its conclusion. Everything a scanner wrote is
// untrusted: rule ids and paths go in code spans, messages through prose, all redacted and cut.

// maxAnnotations bounds the annotations of one check run (GitHub takes 50 a request; the
// rest go in updates: githubapp.CreateCheckRun).
const maxAnnotations = 200

// Annotation levels of the Checks API.
const (
	AnnotationNotice  = "notice"
	AnnotationWarning = "warning"
	AnnotationFailure = "failure"
)

// CheckAnnotation is one annotation of the check run on a line the patch added or changed,
// in the Checks API's shape. Every text is redacted, visible (no invisible character) and
// within the API's limits.
type CheckAnnotation struct {
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	Level      string `json:"annotation_level"` // AnnotationNotice, AnnotationWarning or AnnotationFailure
	Message    string `json:"message"`
	Title      string `json:"title,omitempty"`
	RawDetails string `json:"raw_details,omitempty"`
}

// failingFindings counts the scanners' findings at or above the fail level.
func failingFindings(r *runner.Result) int {
	n := 0
	for _, s := range r.Scanners {
		for _, f := range s.Kept {
			if r.ScannerFailLevel.Fails(f.Level) {
				n++
			}
		}
	}
	return n
}

// judgeScanners makes the tests' conclusion a failure when a scanner found something at or
// above FROGNANO_SCANNER_FAIL_LEVEL on a line the patch added or changed, and says so first
// in the title. A scanner that failed to run changes nothing.
func judgeScanners(r *runner.Result, conclusion, title string) (string, string) {
	n := failingFindings(r)
	if n == 0 {
		return conclusion, title
	}
	return CheckFailure, fmt.Sprintf("%d scanner finding(s) at level %s or above on the lines the patch changes. %s",
		n, failLevel(r), title)
}

func failLevel(r *runner.Result) scanner.FailLevel {
	if r.ScannerFailLevel == "" {
		return scanner.DefaultFailLevel
	}
	return r.ScannerFailLevel
}

// writeScanners renders the Scanners section: a row per scanner (what became of it), then the
// findings on the lines the patch changed, the most severe first, at most twice as many as the
// rendering's notes. With tails (report.md), the end of a failed scanner's output follows.
func (x *render) writeScanners(b *strings.Builder, tails bool) {
	r := x.r
	if len(r.Scanners) == 0 {
		return
	}
	b.WriteString("## Scanners\n\n")
	fails := fmt.Sprintf("one at level %s or above fails the check run", codeSpan(string(failLevel(r)), 20))
	if failLevel(r) == scanner.FailNone {
		fails = "none fails the check run (level `none`)"
	}
	fmt.Fprintf(b, "The operator's scanners ran on the patched tree, each in a fresh sandbox sealed like the tests' (offline, "+
		"no credential), with its configuration files as the base has them. Only findings on lines the patch added or changed are listed; %s "+
		"(FROGNANO\\_SCANNER\\_FAIL\\_LEVEL).\n\n", fails)
	b.WriteString("| scanner | exit code | duration | on changed lines | elsewhere (not shown) |\n|---|---|---|---|---|\n")
	for _, s := range r.Scanners {
		code := fmt.Sprint(s.ExitCode)
		if s.ExitCode < 0 {
			code = ""
		}
		if s.Problem != "" {
			fmt.Fprintf(b, "| %s | %s | %s | %s | |\n", codeCell(s.Name, 40), code, roundDur(s.Duration), prose(x.redact(s.Problem), x.d.note))
			continue
		}
		found := fmt.Sprint(len(s.Kept) + s.More)
		if s.Failed > 0 {
			found += x.scannerFailures(s)
		}
		elsewhere := fmt.Sprint(s.Elsewhere)
		if s.Unplaced > 0 {
			elsewhere += fmt.Sprintf(" (+%d outside the repository or without a line)", s.Unplaced)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", codeCell(s.Name, 40), code, roundDur(s.Duration), found, elsewhere)
	}
	b.WriteString("\n")
	b.WriteString("What each scanner's result can be trusted for:\n\n")
	for _, s := range r.Scanners {
		x.writeScannerTrust(b, s)
	}
	b.WriteString("\n")
	all := scannerFindings(r)
	if len(all) > 0 {
		b.WriteString("Findings on the lines the patch added or changed:\n\n")
	}
	limit := 2 * x.d.notes
	for i, f := range all {
		if i == limit {
			fmt.Fprintf(b, "- and %d more (in the check run's annotations and the run's report)\n", len(all)-i)
			break
		}
		msg := "(no message)"
		if f.Message != "" {
			msg = prose(x.redact(f.Message), x.d.note)
		}
		rule := "_(no rule id)_"
		if f.Rule != "" {
			rule = codeSpan(x.redact(f.Rule), 100)
		}
		fmt.Fprintf(b, "- **%s** %s in %s line %s (%s): %s\n", f.Level, rule, codeSpan(x.redact(f.File), 200), lines(f.Finding),
			codeSpan(f.scanner, 40), msg)
	}
	if len(all) > 0 {
		b.WriteString("\n")
	}
	if !tails {
		return
	}
	for _, s := range r.Scanners {
		if s.Problem != "" && strings.TrimSpace(s.Tail) != "" {
			fmt.Fprintf(b, "<details>\n<summary>Output of the scanner %s (last lines)</summary>\n\n%s\n</details>\n\n",
				escapePunct(s.Name), codeBlock(truncateTail(x.redact(s.Tail), audit.TailSize), "text"))
		}
	}
}

// scannerFailures says, in a table cell, that a scanner's own log reports errors of its run (a
// file it could not parse, which it skipped): its count does not cover everything.
func (x *render) scannerFailures(s audit.ScannerRun) string {
	var files []string
	for i, f := range s.FailedFiles {
		if i == x.d.files {
			files = append(files, fmt.Sprintf("and %d more", len(s.FailedFiles)-i))
			break
		}
		files = append(files, codeCell(x.redact(f), 200))
	}
	out := fmt.Sprintf(" (**its SARIF reports %d errors of its own run**: not everything was scanned", s.Failed)
	if len(files) > 0 {
		out += "; files: " + strings.Join(files, ", ")
	}
	return out + ")"
}

// writeScannerTrust is one line on what a scanner's result can be trusted for: whether it runs
// the repository's code (then code the patch can change runs as the scanner, and its findings
// are not promised), and which of its configuration files it read as the base has them.
func (x *render) writeScannerTrust(b *strings.Builder, s audit.ScannerRun) {
	var code string
	switch s.Code.Code {
	case scanner.CodeNone:
		code = "does not run the repository's code (" + s.Code.Why + ")"
	case scanner.CodeRuns:
		code = "**runs the repository's code** (" + s.Code.Why + "): code the patch can change runs " +
			"as the scanner and can change or replace what it reports, so its findings, and the absence of any, are not promised"
	default:
		code = "frognano does not know whether it runs the repository's code (the operator can name its tool with `tool=` or say " +
			"`code=runs` or `code=none`): if it does, its findings are not promised"
	}
	var cfg string
	switch {
	case len(s.Config) == 0:
		cfg = "no configuration file is named for it, so the patch's changes to its configuration count"
	case len(s.Reset) == 0:
		cfg = "none of its configuration files (" + x.patternList(s.Config) + ") differs from the base's"
	default:
		var parts []string
		for i, r := range s.Reset {
			if i == x.d.files {
				parts = append(parts, fmt.Sprintf("and %d more", len(s.Reset)-i))
				break
			}
			parts = append(parts, codeSpan(x.redact(r.Path), 200)+" "+resetWhy(r))
		}
		cfg = fmt.Sprintf("its configuration files are the base's, whole (%s): %s", codeSpan(short(s.ConfigFrom), 20), strings.Join(parts, "; "))
	}
	fmt.Fprintf(b, "- %s %s; %s.\n", codeSpan(s.Name, 40), code, cfg)
}

// patternList names at most five configuration patterns.
func (x *render) patternList(ps []string) string {
	var out []string
	for i, p := range ps {
		if i == 5 {
			out = append(out, fmt.Sprintf("and %d more", len(ps)-i))
			break
		}
		out = append(out, codeSpan(p, 60))
	}
	return strings.Join(out, ", ")
}

// resetWhy says what became of a configuration file the patched tree had otherwise.
func resetWhy(r scanner.Reset) string {
	switch {
	case r.Kept:
		return "(the base has it, but the patch put a file where its folder is, or a folder where it is: scanned without it)"
	case r.InBase && r.InPatched:
		return "(changed: scanned as the base has it)"
	case r.InBase:
		return "(removed by the patch: put back)"
	}
	return "(added by the patch: left out)"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func lines(f scanner.Finding) string {
	if f.EndLine > f.Line {
		return fmt.Sprintf("%d–%d", f.Line, f.EndLine)
	}
	return fmt.Sprint(f.Line)
}

// scannerFinding is a finding with the scanner that made it.
type scannerFinding struct {
	scanner.Finding
	scanner string
}

// scannerFindings is every scanner's kept findings, the most severe first, then in each
// scanner's order (file, line, rule).
func scannerFindings(r *runner.Result) []scannerFinding {
	var out []scannerFinding
	for l := scanner.LevelError; l >= scanner.LevelNone; l-- {
		for _, s := range r.Scanners {
			for _, f := range s.Kept {
				if f.Level == l {
					out = append(out, scannerFinding{f, s.Name})
				}
			}
		}
	}
	return out
}

// Annotations is the check run's annotations: one per finding on a changed line, the most
// severe first, then one per suppression comment the patch adds (when a scanner is configured,
// at most maxSuppressionAnnotations), at most 200 in all. A finding that fails the check
// (FROGNANO_SCANNER_FAIL_LEVEL) is a failure; otherwise an error or a warning is a warning, a
// note or none a notice; a suppression comment is a warning. redact is applied to every
// untrusted string (nil: none).
func Annotations(r *runner.Result, redact func(string) string) []CheckAnnotation {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	sup := suppressionAnnotations(r, redact, maxSuppressionAnnotations)
	var out []CheckAnnotation
	for _, f := range scannerFindings(r) {
		if len(out) == maxAnnotations-len(sup) {
			break
		}
		level := AnnotationNotice
		switch {
		case r.ScannerFailLevel.Fails(f.Level):
			level = AnnotationFailure
		case f.Level >= scanner.LevelWarning:
			level = AnnotationWarning
		}
		msg := f.Message
		if msg == "" {
			msg = "(no message)"
		}
		rule := f.Rule
		if rule == "" {
			rule = "(no rule id)"
		}
		out = append(out, CheckAnnotation{
			Path: redact(f.File), StartLine: f.Line, EndLine: max(f.EndLine, f.Line), Level: level,
			Message:    plainCut(redact(msg), 2000),
			Title:      plainCut(redact(f.scanner+": "+rule), 255),
			RawDetails: plainCut(redact(fmt.Sprintf("scanner: %s\nrule: %s\nSARIF level: %s", f.scanner, rule, f.Level)), 1000),
		})
	}
	return append(out, sup...)
}

// plainCut is untrusted text for a field GitHub shows as plain text: invisible characters as
// code points (newlines kept), at most n characters.
func plainCut(s string, n int) string {
	v := visible(s, true)
	if runeLen(v) <= n {
		return v
	}
	cut, _ := cutVisible(v, n-1)
	return cut + "…"
}
