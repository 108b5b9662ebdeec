// Package report renders what one run found (a runner.Result) as the text people read:
// report.md, the draft pull request's body, the status comment's summary and headline, the
// check run `frognano / tests` (conclusion, summary, text and annotations), the transcript of
// the model's steps, and one-line forms for a terminal or a run's record (a tool call, the
// environment, the usage). markdown.go owns how untrusted text is written into markdown so
// that GitHub shows it as text; run's status comments use its primitives as well.
//
// report only renders: it never holds a credential, never talks to GitHub, Docker or the
// model, never reads a file or the environment, and never sends what it renders (run and
// cmd/frognano do). It must never import githubapp, queue, run, server or web: the caller hands
// it the one redactor (Fit.Redact). Every untrusted string goes through markdown.go's
// primitives, redacted before it is cut, and each text fits its GitHub limit as rendered,
// so that nobody cuts it afterwards.
package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
)

// GitHubBodyLimit is the most characters GitHub accepts in an issue or pull request body
// or a comment.
const GitHubBodyLimit = 65536

// Fit describes the text GitHub will receive, so that the renderer, which knows where its
// output may be cut, is the only place that cuts it: nobody cuts the text after it.
type Fit struct {
	// Limit is the most characters (code points) the whole text may have once the caller
	// has added Suffix and redacted it; GitHubBodyLimit when <= 0.
	Limit int
	// Suffix is what the caller appends, such as the line that links the issue. The
	// renderer appends it itself, so the returned text is the whole text.
	Suffix string
	// Redact is what the caller applies before sending (it may apply it again: redacting
	// redacted text changes nothing). The renderer applies it to every untrusted string
	// before cutting it, so no cut leaves half a secret, and measures the result.
	Redact func(string) string
}

func (f Fit) limit() int {
	if f.Limit <= 0 {
		return GitHubBodyLimit
	}
	return f.Limit
}

// render holds what one rendering needs: the result, the redactor, and how much detail
// fits (the PR body and the summary drop detail, never cut markup in half, when a result
// is too large).
type render struct {
	r      *runner.Result
	redact func(string) string
	d      detail
}

// detail bounds every part of a rendering, so that even the least detailed one of the
// largest result fits GitHub's limit with room to spare.
type detail struct {
	final, tail, tests, files, dropped, trust, note, notes int
	secrets                                                int // rows of the secrets table
	setupLines, setupChars                                 int // the end of a failed setup's log
}

var details = []detail{
	{final: 8000, tail: 6000, tests: 20, files: 100, dropped: 10, trust: 20, note: 500, notes: 20, secrets: 100, setupLines: 30, setupChars: 4000},
	{final: 2000, tail: 0, tests: 5, files: 20, dropped: 3, trust: 10, note: 300, notes: 10, secrets: 20, setupLines: 15, setupChars: 2000},
	{final: 500, tail: 0, tests: 0, files: 5, dropped: 0, trust: 5, note: 200, notes: 5, secrets: 5, setupLines: 5, setupChars: 500},
}

func newRender(r *runner.Result, redact func(string) string, level int) *render {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &render{r: r, redact: redact, d: details[level]}
}

// Markdown renders report.md: what a reviewer reads after `frognano run`.
func Markdown(r *runner.Result) string {
	x := newRender(r, nil, 0)
	var b strings.Builder
	fmt.Fprintf(&b, "# frognano run %s\n\n", prose(r.RunID, 200))
	x.writeTrust(&b)
	x.writeDepsWarning(&b)
	b.WriteString("## Task\n\n")
	b.WriteString(codeBlock(r.Task, "text"))
	b.WriteString("\n")
	x.writeSetupFailure(&b)
	if r.SetupFailed == "" { // else there was no agent, no patch and no test run to report
		x.writeOutcome(&b)
		x.writeSecrets(&b)
		x.writeTests(&b)
		x.writeScanners(&b, true)
		x.writeSuppressions(&b)
		x.writeFiles(&b)
		x.writeDependencies(&b)
		x.writeEgress(&b)
		x.writeAttempts(&b, attemptRoom[0])
	}
	x.writeFacts(&b)
	x.writeEnvironment(&b)
	return b.String()
}

// minTranscript is the least room worth giving the transcript before the rest of the
// body gives up detail instead.
const minTranscript = 4000

// PRBody renders the whole body of the draft pull request, fit.Suffix included, within
// fit's limit after redaction. The transcript is the part that gets cut, with a note; when
// the rest is too large, it loses detail (test output, long lists) first. The transcript
// is always closed.
func PRBody(r *runner.Result, fit Fit) string {
	limit := fit.limit()
	for level := range details {
		x := newRender(r, fit.Redact, level)
		var b strings.Builder
		b.WriteString("> [!IMPORTANT]\n> This change was written by an AI model (FrogNano) and has not been reviewed. " +
			"It needs human review before it is merged.\n\n")
		x.writeTrust(&b)
		x.writeDepsWarning(&b)
		x.writeOutcome(&b)
		x.writeSecrets(&b)
		x.writeTests(&b)
		x.writeScanners(&b, false)
		x.writeSuppressions(&b)
		x.writeFiles(&b)
		x.writeDependencies(&b)
		x.writeEgress(&b)
		x.writeAttempts(&b, attemptRoom[level])
		x.writeFacts(&b)
		head := b.String()
		room := limit - runeLen(head) - runeLen(transcriptOpen) - runeLen(transcriptClose) - runeLen(fit.Suffix)
		if room < minTranscript && level < len(details)-1 {
			continue
		}
		// Redaction of the whole could still grow it (a secret that spans two pieces):
		// measure what GitHub gets, and give the transcript less room until it fits.
		for try := 0; try < 4 && room > 0; try++ {
			body := x.redact(head + transcriptOpen + x.transcript(room) + transcriptClose + fit.Suffix)
			over := runeLen(body) - limit
			if over <= 0 {
				return body
			}
			room -= over + 200
		}
		body := x.redact(head + transcriptOpen + transcriptCut + transcriptClose + fit.Suffix)
		if runeLen(body) <= limit {
			return body
		}
	}
	// Unreachable with GitHub's limit: the least detailed head is far smaller.
	return fit.Suffix
}

// Summary renders what the status comment says when there is no pull request: what was
// tried and why it ended, fit.Suffix included, within fit's limit after redaction.
func Summary(r *runner.Result, fit Fit) string {
	limit := fit.limit()
	for level := range details {
		x := newRender(r, fit.Redact, level)
		var b strings.Builder
		x.writeSetupFailure(&b)
		if r.SetupFailed == "" {
			x.writeTrust(&b)
			x.writeDepsWarning(&b)
			x.writeOutcome(&b)
			x.writeSecrets(&b)
			x.writeTests(&b)
			x.writeSuppressions(&b)
			x.writeFiles(&b)
			x.writeDependencies(&b)
			x.writeEgress(&b)
			x.writeAttempts(&b, 0)
		}
		x.writeFacts(&b)
		s := x.redact(b.String() + fit.Suffix)
		if runeLen(s) <= limit {
			return s
		}
	}
	return fit.Suffix
}

// Headline is one line of markdown for a status comment next to the pull request link: what
// the tests said before and after the patch, whether the patch changes files that can sway
// them (the test result may then not be trustworthy), and what was left out of it.
func Headline(r *runner.Result) string {
	var parts []string
	switch {
	case r.TestCommand == "":
		parts = append(parts, "No tests were run (no test command was found).")
	case r.TestsBefore != nil && r.TestsAfter != nil && r.TestsBefore.Error == "" && r.TestsAfter.Error == "":
		line := fmt.Sprintf("Tests (%s): %s before, %s with the patch", codeSpan(r.TestCommand, 80), testState(r.TestsBefore), testState(r.TestsAfter))
		if c := r.Comparison; c != nil && c.PerTest {
			line += fmt.Sprintf("; %d fixed, %d broken, %d still failing", len(c.Fixed), len(c.Broken), len(c.StillFailing))
		}
		parts = append(parts, line+".")
	default:
		parts = append(parts, "The tests could not be run before and after; see the pull request.")
	}
	if t := r.TestTrust(); len(t) > 0 {
		var files []string
		for i, f := range t {
			if i == 5 {
				files = append(files, fmt.Sprintf("and %d more (listed in the pull request)", len(t)-5))
				break
			}
			files = append(files, codeSpan(f.Path, 100)+" ("+prose(f.Why, 200)+")")
		}
		parts = append(parts, "**The test result may not be trustworthy:** the patch changes files that can change what the tests report without changing the code under test: "+
			strings.Join(files, "; ")+".")
	}
	if list := newRender(r, nil, 0).newTestList(5, 100); list != "" {
		parts = append(parts, "New test files: "+list+".")
	}
	if r.Patch != nil && len(r.SecretFindings) > 0 {
		parts = append(parts, "**The patch holds what looks like a secret** (published because `FROGNANO_SECRETS=warn`): "+
			secretsLine(r.SecretFindings, 5)+".")
	}
	parts = append(parts, depsHeadline(r)...)
	if n := failingFindings(r); n > 0 {
		parts = append(parts, fmt.Sprintf("**%d scanner finding(s) at level %s or above** on the lines the patch changes (listed in the pull request and the check run).",
			n, failLevel(r)))
	}
	if s := suppressionsHeadline(r); s != "" {
		parts = append(parts, s)
	}
	if e := r.Egress; !e.Empty() && e.Attempted() {
		parts = append(parts, "The model's commands tried to reach the network, which the sandbox does not have; "+
			"the pull request says what they tried and how to give the next run what it lacked.")
	}
	if r.Patch != nil {
		if n := len(r.Patch.Dropped); n > 0 {
			parts = append(parts, fmt.Sprintf("%d path(s) were left out of the patch (listed in the pull request).", n))
		}
	}
	return strings.Join(parts, " ")
}

// newTestList names the new test files, at most limit of them, with what each defines.
func (x *render) newTestList(limit, width int) string {
	t := x.r.NewTests()
	var parts []string
	for i, f := range t {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(t)-i))
			break
		}
		n := "1 test function"
		if f.Tests != 1 {
			n = fmt.Sprintf("%d test functions", f.Tests)
		}
		parts = append(parts, codeSpan(x.redact(f.Path), width)+" ("+n+")")
	}
	return strings.Join(parts, ", ")
}

// writeNewTests is the neutral line that lists the new test files that only add tests.
func (x *render) writeNewTests(b *strings.Builder) {
	if list := x.newTestList(x.d.trust, 200); list != "" {
		b.WriteString("New test files: " + list + ". They only define tests (frognano read them: nothing runs at import " +
			"or reaches beyond the tests), so they cast no doubt on the result; read them with the change.\n\n")
	}
}

func testState(t *runner.TestRun) string {
	switch {
	case t.TimedOut:
		return "timed out"
	case t.ExitCode == 0:
		return "passing"
	default:
		return fmt.Sprintf("failing (exit %d)", t.ExitCode)
	}
}

// writeTrust is the warning, at the top, that the test result may not be trustworthy.
func (x *render) writeTrust(b *strings.Builder) {
	t := x.r.TestTrust()
	if len(t) == 0 {
		return
	}
	b.WriteString("> [!WARNING]\n> **The test result may not be trustworthy.** The patch changes files that can change " +
		"what the tests report without changing the code under test:\n>\n")
	for i, f := range t {
		if i == x.d.trust {
			fmt.Fprintf(b, "> - and %d more\n", len(t)-i)
			break
		}
		fmt.Fprintf(b, "> - %s: %s\n", codeSpan(x.redact(f.Path), 200), prose(x.redact(f.Why), 300))
	}
	b.WriteString("\n")
}

func (x *render) writeOutcome(b *strings.Builder) {
	r := x.r
	b.WriteString("## Outcome\n\n")
	fmt.Fprintf(b, "- Exit reason: %s (%s)\n", codeSpan(r.ExitReason(), 40), describeExit(r.ExitReason()))
	if r.Leaf != nil && r.Leaf.Error != "" {
		fmt.Fprintf(b, "- Error: %s\n", prose(x.redact(r.Leaf.Error), x.d.note))
	}
	switch {
	case r.Patch == nil && len(r.SecretFindings) > 0:
		b.WriteString("- Patch: none: refused for what looks like a secret (listed under **Secrets**)\n")
	case r.Patch == nil && r.Refused != nil:
		b.WriteString("- Patch: none: refused (below)\n")
	case r.Patch == nil:
		b.WriteString("- Patch: none\n")
	case r.Patch.TooLarge:
		fmt.Fprintf(b, "- Patch: %d bytes, over the %d-byte limit; reported, not usable\n", r.Patch.Size, patchLimit(r))
	case len(r.Patch.Diff) == 0:
		b.WriteString("- Patch: empty (the agent changed no file)\n")
	default:
		fmt.Fprintf(b, "- Patch: %d file(s), %d bytes\n", len(r.Patch.Files), len(r.Patch.Diff))
	}
	for i, n := range r.Notes {
		if i == x.d.notes {
			fmt.Fprintf(b, "- and %d more notes (kept with the run)\n", len(r.Notes)-i)
			break
		}
		fmt.Fprintf(b, "- %s\n", prose(x.redact(n), x.d.note))
	}
	b.WriteString("\n")
	x.writeRefusal(b) // refusal.go
	b.WriteString("### The model's final message\n\n")
	final := ""
	if r.Leaf != nil {
		final = strings.TrimSpace(r.Leaf.FinalMessage)
	}
	if final == "" {
		b.WriteString("_(none)_\n\n")
		return
	}
	cut, more := cutVisible(x.redact(final), x.d.final)
	b.WriteString(codeBlock(cut, "text"))
	if more > 0 {
		fmt.Fprintf(b, "_… %d more characters; the whole message is in the trajectory kept with the run._\n", more)
	}
	b.WriteString("\n")
}

// patchLimit is the size over which the patch was only reported: the configured one, or
// the default that Sanitize applies when none was given.
func patchLimit(r *runner.Result) int64 {
	if r.MaxPatchBytes > 0 {
		return r.MaxPatchBytes
	}
	return patch.DefaultMaxBytes
}

func (x *render) writeTests(b *strings.Builder) {
	r := x.r
	b.WriteString("## Tests\n\n")
	if r.TestCommand == "" {
		b.WriteString("No test command was given or detected; the change was not verified by tests.\n\n")
		x.writeNewTests(b)
		return
	}
	fmt.Fprintf(b, "Command: %s (run by frognano in fresh sandboxes; the model never saw these runs)\n\n", codeSpan(r.TestCommand, 200))
	b.WriteString("| | exit code | duration | passed | failed | skipped |\n|---|---|---|---|---|---|\n")
	row := func(name string, t *runner.TestRun) {
		if t == nil {
			fmt.Fprintf(b, "| %s | not run | | | | |\n", name)
			return
		}
		if t.Error != "" {
			fmt.Fprintf(b, "| %s | error: %s | | | | |\n", name, codeCell(x.redact(t.Error), 200))
			return
		}
		p, f, s := testCounts(t)
		code := fmt.Sprint(t.ExitCode)
		if t.TimedOut {
			code = "timed out"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", name, code, roundDur(t.Duration), p, f, s)
	}
	row("before (untouched)", r.TestsBefore)
	row("after (with the patch)", r.TestsAfter)
	b.WriteString("\n")
	if c := r.Comparison; c != nil {
		list := func(name string, xs []string) {
			if len(xs) == 0 {
				return
			}
			fmt.Fprintf(b, "- %s (%d)", name, len(xs))
			if x.d.tests > 0 {
				b.WriteString(": " + x.codeList(xs, x.d.tests))
			}
			b.WriteString("\n")
		}
		list("Fixed", c.Fixed)
		list("Broken", c.Broken)
		list("Still failing", c.StillFailing)
		list("New", c.New)
		list("Removed", c.Removed)
		b.WriteString("\n")
	}
	x.writeNewTests(b)
	if x.d.tail == 0 {
		return
	}
	for _, t := range []struct {
		name string
		run  *runner.TestRun
	}{{"before", r.TestsBefore}, {"after", r.TestsAfter}} {
		if t.run == nil || t.run.Tail == "" {
			continue
		}
		fmt.Fprintf(b, "<details>\n<summary>Test output %s (last lines)</summary>\n\n%s\n</details>\n\n", t.name,
			codeBlock(truncateTail(x.redact(t.run.Tail), x.d.tail), "text"))
	}
}

func testCounts(t *runner.TestRun) (passed, failed, skipped string) {
	if t.Tests == nil {
		return "", "", ""
	}
	var p, f, s int
	for _, st := range t.Tests {
		switch st {
		case "pass":
			p++
		case "fail":
			f++
		case "skip":
			s++
		}
	}
	return fmt.Sprint(p), fmt.Sprint(f), fmt.Sprint(s)
}

func (x *render) writeFiles(b *strings.Builder) {
	r := x.r
	if r.Patch == nil {
		return
	}
	if len(r.Patch.Files) > 0 {
		b.WriteString("## Files changed\n\n| file | status | + | - |\n|---|---|---|---|\n")
		for i, f := range r.Patch.Files {
			if i == x.d.files {
				fmt.Fprintf(b, "| and %d more | | | |\n", len(r.Patch.Files)-i)
				break
			}
			name := codeCell(x.redact(f.Path()), 200)
			if f.Status == patch.StatusRenamed || f.Status == patch.StatusCopied {
				name = codeCell(x.redact(f.OldPath), 200) + " → " + codeCell(x.redact(f.NewPath), 200)
			}
			add, del := fmt.Sprint(f.Added), fmt.Sprint(f.Deleted)
			if f.Binary {
				add, del = "bin", "bin"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, fileStatus(f), add, del)
		}
		b.WriteString("\n")
	}
	// Dropped can hold a whole node_modules: list a few per reason, count the rest.
	byReason := map[string][]string{}
	var reasons []string
	for _, d := range r.Patch.Dropped {
		if _, ok := byReason[d.Reason]; !ok {
			reasons = append(reasons, d.Reason)
		}
		byReason[d.Reason] = append(byReason[d.Reason], d.Path)
	}
	for _, reason := range reasons {
		note := ""
		if reason == patch.DropWorkflow {
			note = "; rerun with --allow-workflow-changes (FROGNANO_ALLOW_WORKFLOW_CHANGES) to keep them"
		}
		fmt.Fprintf(b, "- Left out of the patch (%s%s): ", escapePunct(reason), note)
		if x.d.dropped > 0 {
			b.WriteString(x.codeList(byReason[reason], x.d.dropped))
		} else {
			fmt.Fprintf(b, "%d path(s)", len(byReason[reason]))
		}
		b.WriteString("\n")
	}
	if len(reasons) > 0 {
		b.WriteString("\n")
	}
}

// fileStatus says what happened to a file, mode changes included: a file that became
// executable is not just "modified".
func fileStatus(f patch.File) string {
	mode := func(m string) string {
		switch m {
		case patch.ModeExecutable:
			return m + " (executable)"
		case patch.ModeSymlink:
			return m + " (symlink)"
		}
		return m
	}
	switch {
	case f.Status == patch.StatusAdded && f.NewMode != "" && f.NewMode != patch.ModeFile:
		return "added, mode " + mode(f.NewMode)
	case f.Status == patch.StatusDeleted || f.Status == patch.StatusAdded:
		return f.Status
	case f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode:
		s := "mode " + f.OldMode + " → " + mode(f.NewMode)
		if f.Status != patch.StatusMode {
			s = f.Status + ", " + s
		}
		return s
	}
	return f.Status
}

func (x *render) codeList(xs []string, n int) string {
	var parts []string
	for i, s := range xs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-n))
			break
		}
		parts = append(parts, codeSpan(x.redact(s), 150))
	}
	return strings.Join(parts, ", ")
}

func (x *render) writeFacts(b *strings.Builder) {
	r := x.r
	b.WriteString("## Run facts\n\n")
	if r.ModelName != "" {
		fmt.Fprintf(b, "- Model: %s (%s)\n", codeSpan(r.ModelName, 100), codeSpan(r.Model, 100))
	} else {
		fmt.Fprintf(b, "- Model: %s\n", codeSpan(r.Model, 100))
	}
	if r.EscalatedFrom != "" {
		fmt.Fprintf(b, "- Escalated: no attempt of model %s passed the tests, so model %s tried and wrote this patch\n",
			codeSpan(r.EscalatedFrom, 100), codeSpan(r.ModelName, 100))
	}
	fmt.Fprintf(b, "- Base commit: %s\n", codeSpan(r.BaseCommit, 64))
	if lr := r.Leaf; lr != nil {
		fmt.Fprintf(b, "- Steps: %d\n", len(lr.Steps))
		fmt.Fprintf(b, "- Tokens: %d prompt, %d completion; context at the end %d\n", lr.PromptTokens, lr.CompletionTokens, lr.ContextTokens)
		fmt.Fprintf(b, "- Wall time: %s in all; model %s, tools %s, tests %s\n",
			roundDur(r.Elapsed), roundDur(lr.ModelTime), roundDur(lr.ToolTime), roundDur(r.TestTime()))
	}
	b.WriteString("\n")
}

func describeExit(reason string) string {
	switch reason {
	case leaf.ExitAgent:
		return "the model finished"
	case leaf.ExitMaxTurns:
		return "the step limit was reached"
	case leaf.ExitMaxContext:
		return "the context window was full"
	case leaf.ExitMaxTokensPerTurn:
		return "a turn hit the per-turn token cap"
	case leaf.ExitMaxTime:
		return "the time limit was reached"
	case leaf.ExitCancelled:
		return "the run was cancelled"
	case leaf.ExitLLMError:
		return "the model server returned an error"
	case leaf.ExitToolError:
		return "the sandbox broke"
	case runner.ExitSetupFailed:
		return "the repository's setup script failed; the model was not called"
	case runner.ExitEnvironmentRefused:
		return "frognano refused the environment setup built; the model was not called"
	}
	return "unknown"
}

// truncateTail keeps the end of s, where test runners print their summary: at most n
// characters, an ellipsis first when it cut.
func truncateTail(s string, n int) string {
	if tail, more := clip.Tail(s, n-1); more > 1 {
		return clip.Ellipsis + tail
	}
	return s
}

func roundDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}
