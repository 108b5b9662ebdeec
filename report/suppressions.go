package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner"
)

// This file renders the suppression comments the patch adds (audit.Auditor.Added): a section of
// report.md, the PR body, the status comment's summary and the check run's, a part of the
// headline, and check-run annotations when a scanner is configured. The directive's text is
// the patch's (untrusted): code spans, redacted.

// maxSuppressionAnnotations is the most annotations suppressions take of the check run's
// maxAnnotations; the scanners' findings get the rest.
const maxSuppressionAnnotations = 50

// writeSuppressions lists every suppression comment the patch adds, as a table.
func (x *render) writeSuppressions(b *strings.Builder) {
	r := x.r
	n := len(r.Suppressions) + r.SuppressionsMore
	if n == 0 {
		return
	}
	b.WriteString("## Suppression comments\n\n")
	fmt.Fprintf(b, "The patch adds %d comment(s) that tell a scanner to skip findings on the lines they cover. "+
		"A patch can write them to hide what a scanner would report, so each is listed here, whether or not scanners run "+
		"on this repository; ask why it is needed.\n\n", n)
	b.WriteString("| file | line | comment | honoured by |\n|---|---|---|---|\n")
	limit := 2 * x.d.files
	for i, s := range r.Suppressions {
		if i == limit {
			fmt.Fprintf(b, "\nAnd %d more (in the run's report).\n", n-i)
			break
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", codeCell(x.redact(s.File), 200), s.Line, codeCell(x.redact(s.Text), 100), s.For)
	}
	if r.SuppressionsMore > 0 && len(r.Suppressions) <= limit {
		fmt.Fprintf(b, "\nAnd %d more, not kept.\n", r.SuppressionsMore)
	}
	b.WriteString("\n")
}

// suppressionsHeadline is the headline's part about suppression comments, "" for none.
func suppressionsHeadline(r *runner.Result) string {
	n := len(r.Suppressions) + r.SuppressionsMore
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("**The patch adds %d suppression comment(s)** that tell a scanner to skip findings (listed in the pull request).", n)
}

// suppressionAnnotations are the check run's annotations of the suppression comments, at most
// max: one warning per comment, when a scanner is configured (its findings are what such a
// comment hides).
func suppressionAnnotations(r *runner.Result, redact func(string) string, max int) []CheckAnnotation {
	if len(r.Scanners) == 0 {
		return nil
	}
	var out []CheckAnnotation
	for _, s := range r.Suppressions {
		if len(out) == max {
			break
		}
		out = append(out, CheckAnnotation{
			Path: redact(s.File), StartLine: s.Line, EndLine: s.Line, Level: AnnotationWarning,
			Title: plainCut(redact("suppression comment: "+s.Kind), 255),
			Message: plainCut(redact(fmt.Sprintf("The patch adds %q here: a comment that tells a scanner to skip findings on the lines "+
				"it covers (honoured by %s). frognano lists every suppression comment a patch adds; ask why it is needed.", s.Text, s.For)), 2000),
			RawDetails: plainCut(redact(fmt.Sprintf("suppression: %s\nhonoured by: %s", s.Kind, s.For)), 1000),
		})
	}
	return out
}
