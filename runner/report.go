package runner

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/patch"
)

// GitHubBodyLimit is the most characters GitHub accepts in an issue or pull request body.
const GitHubBodyLimit = 65536

// Markdown renders report.md: what a reviewer reads after `frognano run`.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# frognano run %s\n\n", r.RunID)
	b.WriteString("## Task\n\n")
	b.WriteString(fence(r.Task))
	b.WriteString("\n")
	r.writeOutcome(&b)
	r.writeTests(&b)
	r.writeFiles(&b)
	r.writeFacts(&b)
	return b.String()
}

// PRBody renders the body of the draft pull request, within limit characters
// (GitHubBodyLimit when limit <= 0). The transcript is the part that gets cut, with a note.
// The caller adds the line that links the issue.
func (r *Result) PRBody(limit int) string {
	if limit <= 0 {
		limit = GitHubBodyLimit
	}
	var b strings.Builder
	b.WriteString("> [!IMPORTANT]\n> This change was written by an AI model (FrogNano) and has not been reviewed. " +
		"It needs human review before it is merged.\n\n")
	r.writeOutcome(&b)
	r.writeTests(&b)
	r.writeFiles(&b)
	r.writeFacts(&b)
	head := b.String()
	const open = "<details>\n<summary>Transcript (step by step)</summary>\n\n"
	const closing = "\n</details>\n"
	room := limit - runeLen(head) - runeLen(open) - runeLen(closing)
	if room < 200 {
		return truncateRunes(head, limit)
	}
	return head + open + r.transcript(room) + closing
}

// Summary renders what the status comment says when there is no pull request: what was
// tried and why it ended.
func (r *Result) Summary() string {
	var b strings.Builder
	r.writeOutcome(&b)
	r.writeTests(&b)
	r.writeFiles(&b)
	r.writeFacts(&b)
	return truncateRunes(b.String(), GitHubBodyLimit-2000)
}

// Headline is one line of markdown for a status comment next to the pull request link: what
// the tests said before and after the patch, whether it edits existing tests, and what was
// left out of it.
func (r *Result) Headline() string {
	var parts []string
	switch {
	case r.TestCommand == "":
		parts = append(parts, "No tests were run (no test command was found).")
	case r.TestsBefore != nil && r.TestsAfter != nil && r.TestsBefore.Error == "" && r.TestsAfter.Error == "":
		line := fmt.Sprintf("Tests (`%s`): %s before, %s with the patch", inline(r.TestCommand, 80), testState(r.TestsBefore), testState(r.TestsAfter))
		if c := r.Comparison; c != nil && c.PerTest {
			line += fmt.Sprintf("; %d fixed, %d broken, %d still failing", len(c.Fixed), len(c.Broken), len(c.StillFailing))
		}
		parts = append(parts, line+".")
	default:
		parts = append(parts, "The tests could not be run before and after; see the pull request.")
	}
	if r.Patch != nil {
		if touched := touchedTests(r); len(touched) > 0 {
			parts = append(parts, "The patch edits or deletes existing test files.")
		}
		if n := len(r.Patch.Dropped); n > 0 {
			parts = append(parts, fmt.Sprintf("%d path(s) were left out of the patch (listed in the pull request).", n))
		}
	}
	return strings.Join(parts, " ")
}

func testState(t *TestRun) string {
	switch {
	case t.TimedOut:
		return "timed out"
	case t.ExitCode == 0:
		return "passing"
	default:
		return fmt.Sprintf("failing (exit %d)", t.ExitCode)
	}
}

func (r *Result) writeOutcome(b *strings.Builder) {
	b.WriteString("## Outcome\n\n")
	fmt.Fprintf(b, "- Exit reason: `%s` (%s)\n", r.ExitReason(), describeExit(r.ExitReason()))
	if r.Leaf != nil && r.Leaf.Error != "" {
		fmt.Fprintf(b, "- Error: %s\n", inline(r.Leaf.Error, 500))
	}
	switch {
	case r.Patch == nil:
		b.WriteString("- Patch: none\n")
	case r.Patch.TooLarge:
		fmt.Fprintf(b, "- Patch: %d bytes, over the %d-byte limit; reported, not usable\n", r.Patch.Size, DefaultMaxPatchBytes)
	case len(r.Patch.Patch) == 0:
		b.WriteString("- Patch: empty (the agent changed no file)\n")
	default:
		fmt.Fprintf(b, "- Patch: %d file(s), %d bytes\n", len(r.Patch.Files), len(r.Patch.Patch))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "- %s\n", inline(n, 500))
	}
	b.WriteString("\n### The model's final message\n\n")
	final := ""
	if r.Leaf != nil {
		final = strings.TrimSpace(r.Leaf.FinalMessage)
	}
	if final == "" {
		b.WriteString("_(none)_\n\n")
	} else {
		b.WriteString(quote(neutralize(truncateRunes(final, 8000))))
		b.WriteString("\n")
	}
}

func (r *Result) writeTests(b *strings.Builder) {
	b.WriteString("## Tests\n\n")
	if r.TestCommand == "" {
		b.WriteString("No test command was given or detected; the change was not verified by tests.\n\n")
		return
	}
	fmt.Fprintf(b, "Command: `%s` (run by frognano in fresh sandboxes; the model never saw these runs)\n\n", inline(r.TestCommand, 200))
	b.WriteString("| | exit code | duration | passed | failed | skipped |\n|---|---|---|---|---|---|\n")
	row := func(name string, t *TestRun) {
		if t == nil {
			fmt.Fprintf(b, "| %s | not run | | | | |\n", name)
			return
		}
		if t.Error != "" {
			fmt.Fprintf(b, "| %s | error: %s | | | | |\n", name, inline(t.Error, 200))
			return
		}
		p, f, s := t.counts()
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
			fmt.Fprintf(b, "- %s (%d): %s\n", name, len(xs), codeList(xs, 20))
		}
		list("Fixed", c.Fixed)
		list("Broken", c.Broken)
		list("Still failing", c.StillFailing)
		list("New", c.New)
		list("Removed", c.Removed)
		b.WriteString("\n")
	}
	if r.Patch != nil {
		if touched := touchedTests(r); len(touched) > 0 {
			fmt.Fprintf(b, "**The patch edits or deletes existing test files:** %s\n\n", codeList(touched, 20))
		}
	}
	for _, t := range []struct {
		name string
		run  *TestRun
	}{{"before", r.TestsBefore}, {"after", r.TestsAfter}} {
		if t.run == nil || t.run.Tail == "" {
			continue
		}
		fmt.Fprintf(b, "<details>\n<summary>Test output %s (last lines)</summary>\n\n%s\n</details>\n\n", t.name, fence(truncateTail(t.run.Tail, 6000)))
	}
}

func (t *TestRun) counts() (passed, failed, skipped string) {
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

func (r *Result) writeFiles(b *strings.Builder) {
	if r.Patch == nil {
		return
	}
	if len(r.Patch.Files) > 0 {
		b.WriteString("## Files changed\n\n| file | status | + | - |\n|---|---|---|---|\n")
		for _, f := range r.Patch.Files {
			name := f.NewPath
			if name == "" || f.Status == "deleted" {
				name = f.OldPath
			}
			if f.Status == "renamed" {
				name = f.OldPath + " → " + f.NewPath
			}
			add, del := fmt.Sprint(f.Added), fmt.Sprint(f.Deleted)
			if f.Binary {
				add, del = "bin", "bin"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", inline(name, 200), f.Status, add, del)
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
		fmt.Fprintf(b, "- Left out of the patch (%s%s): %s\n", reason, note, codeList(byReason[reason], 10))
	}
	if len(reasons) > 0 {
		b.WriteString("\n")
	}
}

func touchedTests(r *Result) []string {
	var out []string
	for _, f := range r.Patch.TouchesTests() {
		out = append(out, f.Path())
	}
	return out
}

func (r *Result) writeFacts(b *strings.Builder) {
	b.WriteString("## Run facts\n\n")
	fmt.Fprintf(b, "- Model: `%s`\n", inline(r.Model, 100))
	fmt.Fprintf(b, "- Base commit: `%s`\n", r.BaseCommit)
	if lr := r.Leaf; lr != nil {
		fmt.Fprintf(b, "- Steps: %d\n", len(lr.Steps))
		fmt.Fprintf(b, "- Tokens: %d prompt, %d completion; context at the end %d\n", lr.PromptTokens, lr.CompletionTokens, lr.ContextTokens)
		fmt.Fprintf(b, "- Wall time: %s in all; model %s, tools %s, tests %s\n",
			roundDur(r.Elapsed), roundDur(lr.ModelTime), roundDur(lr.ToolTime), roundDur(r.TestTime()))
	}
	b.WriteString("\n")
}

// transcript renders the steps as readable markdown within room characters; each
// observation is cut to a share of the room so that every step shows.
func (r *Result) transcript(room int) string {
	if r.Leaf == nil || len(r.Leaf.Steps) == 0 {
		return "_(no steps)_\n"
	}
	steps := r.Leaf.Steps
	per := room / len(steps)
	obsCap := per - 400
	if obsCap > 4000 {
		obsCap = 4000
	}
	if obsCap < 200 {
		obsCap = 200
	}
	var b strings.Builder
	used := 0 // characters (runes) written to b so far
	const cutNote = "\n_The transcript was cut here to fit GitHub's 65,536-character limit; the full trajectory is kept with the run._\n"
	for _, s := range steps {
		var sb strings.Builder
		fmt.Fprintf(&sb, "**Step %d**\n\n", s.Index+1)
		if c := strings.TrimSpace(s.Assistant.Text()); c != "" {
			sb.WriteString(quote(neutralize(truncateRunes(c, 1500))))
			sb.WriteString("\n")
		}
		for i, tc := range s.Assistant.ToolCalls {
			fmt.Fprintf(&sb, "`%s` %s\n", inline(tc.Function.Name, 40), inline(ArgSummary(tc.Function.Name, tc.Function.Arguments), 300))
			if i < len(s.Observations) {
				sb.WriteString(fence(cutObservation(s.Observations[i].Observation, obsCap)))
			}
			sb.WriteString("\n")
		}
		step := sb.String()
		if used+runeLen(step)+runeLen(cutNote) > room {
			b.WriteString(cutNote)
			return b.String()
		}
		b.WriteString(step)
		used += runeLen(step)
	}
	return b.String()
}

// cutObservation keeps the start of an observation that is too long for the PR body and says
// how much was left out.
func cutObservation(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("\n[… %d more characters cut to fit GitHub's limit; the full trajectory is kept with the run]", len(r)-n)
}

// ArgSummary is a one-line form of a tool call's arguments, for progress lines and transcripts.
func ArgSummary(tool, arguments string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(arguments), &m); err != nil {
		return inline(arguments, 80)
	}
	pick := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				return fmt.Sprint(v)
			}
		}
		return ""
	}
	var s string
	switch tool {
	case "Read", "Write", "Edit":
		s = pick("file_path", "path")
	case "Glob":
		s = pick("pattern")
		if p := pick("path"); p != "" {
			s += " in " + p
		}
	case "Bash":
		s = pick("command")
	default:
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s = strings.Join(keys, ",")
	}
	return inline(s, 80)
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
	}
	return "unknown"
}

var mentionRE = regexp.MustCompile(`(^|[^\w])([@#])(\w)`)

// neutralize keeps untrusted prose from pinging people or linking (and, with closing
// keywords, closing) other issues: a word joiner goes between @ or # and what follows.
func neutralize(s string) string {
	return mentionRE.ReplaceAllString(s, "$1$2\u2060$3")
}

// fence wraps s in a code fence longer than any run of backticks inside it.
func fence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return f + "text\n" + s + f + "\n"
}

func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "> " + strings.Join(lines, "\n> ") + "\n"
}

// inline makes untrusted text safe for one line of markdown (a table cell, a list item).
func inline(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.NewReplacer("|", "\\|", "`", "'", "<", "&lt;", ">", "&gt;").Replace(s)
	return truncateRunes(s, n)
}

func codeList(xs []string, n int) string {
	var parts []string
	for i, x := range xs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-n))
			break
		}
		parts = append(parts, "`"+inline(x, 150)+"`")
	}
	return strings.Join(parts, ", ")
}

func runeLen(s string) int { return len([]rune(s)) }

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-1]) + "…"
}

// truncateTail keeps the end of s, where test runners print their summary.
func truncateTail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
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
