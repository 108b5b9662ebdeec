package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
)

// writeAttemptOutputs writes, for a run of several attempts, each attempt's patch.diff,
// trajectory.json and report.md under OUT/attempt-K/ (the chosen one's are also at the top).
func writeAttemptOutputs(dir string, res *runner.Result) error {
	if res.Attempts == nil {
		return nil
	}
	for _, a := range res.Attempts.Attempts {
		if a.Result == nil {
			continue
		}
		sub := filepath.Join(dir, fmt.Sprintf("attempt-%d", a.K))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", sub, err)
		}
		if err := writeOutputs(sub, a.Result); err != nil {
			return err
		}
	}
	return nil
}

// attemptLines are the summary's lines about the attempts: one per attempt and which won why.
func attemptLines(res *runner.Result) string {
	set := res.Attempts
	if set == nil {
		return ""
	}
	var b strings.Builder
	for i, a := range set.Attempts {
		mark := " "
		if i == set.Chosen {
			mark = "*"
		}
		switch r := a.Result; {
		case r == nil:
			fmt.Fprintf(&b, "frognano: %s attempt %d: error: %s\n", mark, a.K, report.Visible(fmt.Sprint(a.Err)))
		default:
			what := "patch: none"
			if p := r.PatchBytes(); p != nil {
				what = fmt.Sprintf("patch: %d bytes", len(p))
			}
			if c := r.Comparison; c != nil {
				what += fmt.Sprintf(", fixed %d, broken %d, still failing %d", len(c.Fixed), len(c.Broken), len(c.StillFailing))
			}
			steps := 0
			if r.Leaf != nil {
				steps = len(r.Leaf.Steps)
			}
			fmt.Fprintf(&b, "frognano: %s attempt %d: %s after %d steps, %s\n", mark, a.K, r.ExitReason(), steps, what)
		}
	}
	fmt.Fprintf(&b, "frognano: chose attempt %d: %s (each attempt's files are in attempt-K/)\n", set.Attempts[set.Chosen].K, report.Visible(set.Why))
	return b.String()
}
