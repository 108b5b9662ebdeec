package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner"
)

// attemptRoom is, per detail level, the characters the other attempts' collapsed transcripts
// may take in all; the chosen attempt's transcript is the body's own.
var attemptRoom = []int{24000, 6000, 0}

// maxFinalCell is the most of an attempt's final message its table row shows.
const maxFinalCell = 160

// writeAttempts renders, for a run of several attempts, the table of every attempt (exit
// reason, steps, tests fixed and broken, patch size, its final message, which one was
// chosen and why) and, within room characters, each other attempt's transcript collapsed.
// Every cell is inert: numbers frognano counted, or untrusted text in code spans.
func (x *render) writeAttempts(b *strings.Builder, room int) {
	set := x.r.Attempts
	if set == nil || len(set.Attempts) < 2 {
		return
	}
	fmt.Fprintf(b, "## Attempts\n\n%d independent attempts ran; frognano's own test runs chose one.\n\n", len(set.Attempts))
	b.WriteString("| attempt | exit reason | steps | fixed | broken | still failing | patch | final message | |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, a := range set.Attempts {
		chosen := ""
		if i == set.Chosen {
			chosen = "**chosen**"
		}
		r := a.Result
		if r == nil {
			msg := "could not run"
			if a.Err != nil {
				msg = a.Err.Error()
			}
			fmt.Fprintf(b, "| %d | error: %s | | | | | | | %s |\n", a.K, codeCell(x.redact(msg), 200), chosen)
			continue
		}
		steps, final := 0, ""
		if r.Leaf != nil {
			steps, final = len(r.Leaf.Steps), strings.Join(strings.Fields(r.Leaf.FinalMessage), " ")
		}
		fixed, broken, still := "", "", ""
		if c := r.Comparison; c != nil && c.PerTest {
			fixed, broken, still = fmt.Sprint(len(c.Fixed)), fmt.Sprint(len(c.Broken)), fmt.Sprint(len(c.StillFailing))
		} else if r.TestsAfter != nil && r.TestsAfter.Error == "" {
			fixed = "after: " + testState(r.TestsAfter)
		}
		finalCell := "_(none)_"
		if final != "" {
			finalCell = codeCell(x.redact(final), maxFinalCell)
		}
		fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %s | %s | %s | %s |\n",
			a.K, codeCell(r.ExitReason(), 40), steps, fixed, broken, still, patchCell(r), finalCell, chosen)
	}
	fmt.Fprintf(b, "\nChosen: attempt %d, because %s.\n\n", set.Attempts[set.Chosen].K, prose(set.Why, 300))
	others := len(set.Attempts) - 1
	if room <= 0 || others == 0 {
		return
	}
	per := room / others
	for i, a := range set.Attempts {
		if i == set.Chosen || a.Result == nil {
			continue
		}
		y := newRender(a.Result, x.redact, 0)
		fmt.Fprintf(b, "<details>\n<summary>Attempt %d: transcript</summary>\n\n", a.K)
		b.WriteString(y.transcript(max(per-200, 0)))
		b.WriteString("\n</details>\n\n")
	}
}

// patchCell is the patch column: its size, or why there is none to use.
func patchCell(r *runner.Result) string {
	switch {
	case r.Cancelled:
		return "cancelled"
	case r.Patch == nil:
		return "none"
	case r.Patch.TooLarge:
		return fmt.Sprintf("%d bytes, too large", r.Patch.Size)
	case len(r.Patch.Diff) == 0:
		return "empty"
	}
	return fmt.Sprintf("%d file(s), %d bytes", len(r.Patch.Files), len(r.Patch.Diff))
}
