package report

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
)

// refusedRun is a finished run whose patch a check refused with err.
func refusedRun(err error) *runner.Result {
	return &runner.Result{
		RunID: "r1", Task: "Fix it", Model: "m", BaseCommit: "abc", PatchLost: runner.NoPatchRefused, Refused: runner.PatchRefusal(err),
		Leaf: &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "Done."},
	}
}

// TestRefusalsReadCleanly: a run refused by the published-tree check for secret values, the
// tree's path rules, a secrets scan that could not be done, or git, says in report.md and in the
// status comment's summary what was refused and why, in a sentence, with the files as code in a
// table: no error chain, no Go quoting, no markdown escapes in frognano's words, no empty section.
// Before, each read "The patch was refused\: it holds a value \(…\)…: \"notes\.txt\" \(holds…\)"
// as one escaped note.
func TestRefusalsReadCleanly(t *testing.T) {
	t.Parallel()
	values := &patch.ValueError{Files: []patch.Rejected{
		{Path: "token.bin", Reason: "holds the value of MIRROR_TOKEN, as is"},
		{Path: "docs/my notes.txt", Reason: "holds the value of MIRROR_TOKEN, base64-encoded"},
		{Path: "mirror-[value]`|.txt", Reason: "its name holds the value of _EDGE_, as is"},
	}}
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"Values", fmt.Errorf("wrapped: %w", values), []string{
			"**The patch was refused:** it would publish a value frognano keeps secret (a token, or one of the operator's `FROGNANO_SETUP_ENV` values)",
			"| `token.bin` | holds the value of MIRROR_TOKEN, as is |", "| `docs/my notes.txt` | holds the value of MIRROR_TOKEN, base64-encoded |",
			"its name holds the value of \\_EDGE\\_, as is", "- Patch: none: refused (below)"}},
		{"Paths", &patch.RefusedError{Rejected: []patch.Rejected{{Path: ".git/hooks/pre-commit", Reason: "path into .git"}}}, []string{
			"**The patch was refused:** it writes paths that a patch must never write", "| `.git/hooks/pre-commit` | path into .git |"}},
		{"TooLargeToScan", &audit.ScanError{Err: fmt.Errorf("the patch's files could not be scanned: %w", &patch.FileTooLargeError{Path: "big data.bin", Size: 104857601})}, []string{
			"**The patch was refused:** it could not be scanned for secrets, and `FROGNANO_SECRETS=block` refuses a patch it cannot scan.",
			"| `big data.bin` | is 104857601 bytes, over the 100 MB a file may have on GitHub |"}},
		{"ScanTimedOut", &audit.ScanError{Err: errors.New("the patch's files could not be scanned within 5m0s (812 MiB read so far)")}, []string{
			"it could not be scanned for secrets, and `FROGNANO_SECRETS=block` refuses a patch it cannot scan (`the patch's files could not be scanned within 5m0s (812 MiB read so far)`)."}},
		{"TooLargeToReadForValues", fmt.Errorf("reading the published files to check them for secret values: %w", &patch.FileTooLargeError{Path: "model.bin", Size: 104857601}), []string{
			"**The patch was refused:** its published files could not be read whole to check them for secret values",
			"| `model.bin` | is 104857601 bytes, over the 100 MB a file may have on GitHub |"}},
		{"GitFailed", errors.New("comparing the patched tree with the base: git diff-tree: exit status 128"), []string{
			"**The patch was refused:** frognano could not check it on the host, so it was not published unchecked (`comparing the patched tree with the base: git diff-tree: exit status 128`)."}},
		{"DoesNotApply", &patch.ApplyError{Err: errors.New("git apply: exit status 1: \"error: patch failed\"")}, []string{
			"**The patch was refused:** git could not apply it to the base commit on the host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := refusedRun(tc.err)
			report, summary := Markdown(r), Summary(r, Fit{})
			for _, want := range tc.want {
				if !strings.Contains(report, want) || !strings.Contains(summary, want) {
					t.Errorf("report or summary lacks %q:\n%s", want, report)
				}
			}
			for _, bad := range []string{`\"`, `refused\:`, "refusing the patch", "wrapped:"} {
				if strings.Contains(report, bad) {
					t.Errorf("report holds %q:\n%s", bad, report)
				}
			}
			if tc.name == "Values" {
				golden.Check(t, "runner-refused-values-report.md", report)
				golden.Check(t, "runner-refused-values-summary.html", githubtest.ShowAsGitHub(summary))
			}
		})
	}
}

// TestEnvironmentRefusalReadsAsARefusal: an environment the seal check refused is reported as a
// refusal with its own words (section, exit reason, environment line), never as "setup failed"
// with exit status 0; the places are a table, the variable setup exported named as code.
func TestEnvironmentRefusalReadsAsARefusal(t *testing.T) {
	t.Parallel()
	u := &env.Unsealed{Found: []env.SealItem{
		{Path: "/root/.config/mirror.yml", What: "holds the value of MIRROR_TOKEN, base64-encoded"},
		{Path: "$FROGNANO_ENV", Name: "MIRROR", What: "holds the value of MIRROR_TOKEN, as is"},
	}}
	r := &runner.Result{RunID: "r1", Task: "Fix it", Model: "m", BaseCommit: "abc", SetupFailed: u.Reason(), Refused: runner.EnvironmentRefusal(u),
		Environment: &env.Environment{BaseImage: "frognano-sandbox:latest", Key: strings.Repeat("ab", 32),
			Setup: &env.SetupRun{ExitCode: 0, Duration: 3 * time.Second, Network: "none", Log: []byte("configured\n")}}}
	if got := r.ExitReason(); got != runner.ExitEnvironmentRefused || r.NoPatch() != runner.NoPatchSetup {
		t.Errorf("exit reason %q, no patch %q", got, r.NoPatch())
	}
	report, summary := Markdown(r), Summary(r, Fit{})
	for _, want := range []string{"## Environment refused", "frognano refused the environment that the repository's setup script (`.frognano/setup.sh`, from the base commit) built",
		"| `/root/.config/mirror.yml` | holds the value of MIRROR_TOKEN, base64-encoded |", "| `$FROGNANO_ENV` sets `MIRROR` | holds the value of MIRROR_TOKEN, as is |",
		"credential helper", "- The setup script: exit status 0, 3s, network `none`", "configured"} {
		if !strings.Contains(report, want) || !strings.Contains(summary, want) {
			t.Errorf("report or summary lacks %q:\n%s", want, report)
		}
	}
	for _, bad := range []string{"Setup failed", "setup failed", "- Exit status: 0"} {
		if strings.Contains(report, bad) || strings.Contains(summary, bad) {
			t.Errorf("report or summary holds %q:\n%s", bad, report)
		}
	}
	if got := EnvironmentLine(r); got != "frognano-sandbox:latest, environment refused" {
		t.Errorf("EnvironmentLine = %q", got)
	}
	golden.Check(t, "runner-refused-environment-report.md", report)
	lines := RefusalLines(r, "frognano: ")
	if !strings.Contains(lines, "frognano: the environment setup built was refused: setup left a value") ||
		!strings.Contains(lines, "frognano:   $FROGNANO_ENV sets MIRROR: holds the value of MIRROR_TOKEN, as is") {
		t.Errorf("RefusalLines:\n%s", lines)
	}
}
