package report

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
)

// This file renders a runner.Refusal: what a check refused and why, in a sentence, then
// the places it named as a table, in report.md, the PR body's absence (the status comment's
// summary) and `frognano run`'s terminal lines. The paths and variable names are the patch's or
// setup's (code spans, redacted); the rest is frognano's words, with at most an operator's
// setting name, escaped where markdown would read it.

// writeRefusal is the block under the Outcome of a run whose patch a check refused.
func (x *render) writeRefusal(b *strings.Builder) {
	r := x.r.Refused
	if r == nil || r.Environment {
		return
	}
	b.WriteString("**The patch was refused:** " + r.Why)
	x.writeRefusalDetail(b, r)
	x.writeRefusalItems(b, r, "file", "why")
	if r.Fix != "" {
		b.WriteString(operatorWords(r.Fix) + ".\n\n")
	}
}

// writeEnvironmentRefusal is the section of a run whose environment the seal check refused, in
// place of "Setup failed": the script may have exited 0; what it built was refused.
func (x *render) writeEnvironmentRefusal(b *strings.Builder) {
	r := x.r.Refused
	b.WriteString("## Environment refused\n\n")
	fmt.Fprintf(b, "frognano refused the environment that the repository's setup script (%s, from the base commit) built, "+
		"before keeping it: %s", codeSpan(env.ScriptFile, 60), r.Why)
	x.writeRefusalDetail(b, r)
	x.writeRefusalItems(b, r, "place", "what it holds")
	if r.Fix != "" {
		b.WriteString(operatorWords(r.Fix) + ".\n\n")
	}
}

func (x *render) writeRefusalDetail(b *strings.Builder, r *runner.Refusal) {
	if r.Detail != "" {
		fmt.Fprintf(b, " (%s)", codeSpan(x.redact(r.Detail), x.d.note))
	}
	b.WriteString(".\n\n")
}

// writeRefusalItems is the table of the places a refusal named, at most as many as the
// rendering's detail allows.
func (x *render) writeRefusalItems(b *strings.Builder, r *runner.Refusal, place, what string) {
	if len(r.Items) == 0 {
		return
	}
	fmt.Fprintf(b, "| %s | %s |\n|---|---|\n", place, what)
	for i, it := range r.Items {
		if i == x.d.files {
			fmt.Fprintf(b, "| and %d more | |\n", len(r.Items)-i)
			break
		}
		cell := codeCell(x.redact(it.Path), 200)
		if it.Name != "" {
			cell += " sets " + codeCell(x.redact(it.Name), 100)
		}
		fmt.Fprintf(b, "| %s | %s |\n", cell, operatorWords(x.redact(it.What)))
	}
	b.WriteString("\n")
}

// RefusalLines is a refusal for a terminal: the sentence, then one line per place (paths as
// Visible), each line prefixed.
func RefusalLines(r *runner.Result, prefix string) string {
	f := r.Refused
	if f == nil {
		return ""
	}
	var b strings.Builder
	what := "the patch was refused"
	if f.Environment {
		what = "the environment setup built was refused"
	}
	fmt.Fprintf(&b, "%s%s: %s", prefix, what, strings.ReplaceAll(f.Why, "`", ""))
	if f.Detail != "" {
		fmt.Fprintf(&b, " (%s)", Visible(f.Detail))
	}
	b.WriteString("\n")
	for i, it := range f.Items {
		if i == 10 {
			fmt.Fprintf(&b, "%s  and %d more (report.md lists them)\n", prefix, len(f.Items)-i)
			break
		}
		name := ""
		if it.Name != "" {
			name = " sets " + Visible(it.Name)
		}
		fmt.Fprintf(&b, "%s  %s%s: %s\n", prefix, Visible(it.Path), name, Visible(it.What))
	}
	return b.String()
}

// operatorWords is frognano's words with an operator's setting name in them, for markdown:
// what could start markup (a table's pipe, emphasis at a word's edge, code, a link, HTML) is
// escaped; a name's inner underscores, which GitHub reads as text, are left as written, so that
// report.md reads in a terminal.
func operatorWords(s string) string {
	var b strings.Builder
	rs := []rune(Visible(s))
	for i, c := range rs {
		edge := i == 0 || i == len(rs)-1 || !isWord(rs[i-1]) || !isWord(rs[i+1])
		switch {
		case strings.ContainsRune("\\`*[]<>|&~!#@", c), c == '_' && edge:
			b.WriteRune('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
