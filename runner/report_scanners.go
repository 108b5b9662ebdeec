package runner

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner/scanner"
)

// This file renders what the operator's scanners found (scanners.go): the "Scanners" section
// of report.md, the PR body and the check run's summary, the check run's annotations, and
// what the findings do to its conclusion. Everything a scanner wrote is untrusted: rule ids
// and paths go in code spans, messages through prose, all redacted and cut.

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
func (r *Result) failingFindings() int {
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
func (r *Result) judgeScanners(conclusion, title string) (string, string) {
	n := r.failingFindings()
	if n == 0 {
		return conclusion, title
	}
	return CheckFailure, fmt.Sprintf("%d scanner finding(s) at level %s or above on the lines the patch changes. %s",
		n, r.failLevel(), title)
}

func (r *Result) failLevel() scanner.FailLevel {
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
	fails := fmt.Sprintf("one at level %s or above fails the check run", codeSpan(string(r.failLevel()), 20))
	if r.failLevel() == scanner.FailNone {
		fails = "none fails the check run (level `none`)"
	}
	fmt.Fprintf(b, "The operator's scanners ran on the patched tree, each in a fresh sandbox sealed like the tests' (offline, "+
		"no credential). Only findings on lines the patch added or changed are listed; %s "+
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
		elsewhere := fmt.Sprint(s.Elsewhere)
		if s.Unplaced > 0 {
			elsewhere += fmt.Sprintf(" (+%d outside the repository or without a line)", s.Unplaced)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", codeCell(s.Name, 40), code, roundDur(s.Duration), found, elsewhere)
	}
	b.WriteString("\n")
	all := r.scannerFindings()
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
				escapePunct(s.Name), codeBlock(truncateTail(x.redact(s.Tail), scanTailSize), "text"))
		}
	}
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
func (r *Result) scannerFindings() []scannerFinding {
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
// severe first, at most 200. A finding that fails the check (FROGNANO_SCANNER_FAIL_LEVEL) is
// a failure; otherwise an error or a warning is a warning, a note or none a notice. redact is applied to
// every untrusted string (nil: none).
func (r *Result) Annotations(redact func(string) string) []CheckAnnotation {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	var out []CheckAnnotation
	for _, f := range r.scannerFindings() {
		if len(out) == maxAnnotations {
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
	return out
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
