package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/buildtest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// The hostile model sessions of testdata/hostile that attack the transcript (issue #7) run
// through runner.Run in the real sandbox with the real executor: the model's expectations in
// each script check what it saw, and these tests check the transcript and the report. The
// forging scripts also run against dumpable-executor (testdata/hostile), the executor without
// its hardening, which the model's commands can reach: there the host must refuse the forged
// line and end the run as tool_error, with the reason in the report.

// weakExecutor builds testdata/hostile/dumpable-executor once.
var weakExecutor = buildtest.Once("github.com/frognano/frognano/testdata/hostile/dumpable-executor", "frognano-executor")

// runHostile runs testdata/hostile/NAME through runner.Run with the given executor binary.
func runHostile(t *testing.T, name, executorBin string) *runner.Result {
	t.Helper()
	script := leaftest.Load(t, filepath.Join(leaftest.ModelsDir(t), "..", "hostile", name))
	model := leaftest.NewServer(t, script)
	cfg := runner.DefaultConfig()
	cfg.Sandbox.Image = sandbox.DefaultImage
	cfg.Sandbox.ExecutorPath = executorBin
	cfg.Sandbox.Memory = 512 << 20
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.PidsLimit = 64
	cfg.Sandbox.Owner = "runner-test"
	cfg.Leaf.BaseURL = model.URL
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestCmd = "none"
	r := runner.New(docker, cfg, nil)
	runID := strings.NewReplacer("/", "-", "_", "-").Replace(fmt.Sprintf("rt-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano()))
	res, err := r.Run(context.Background(), runner.Spec{RunID: runID, RepoDir: checkout(t, "pyaverage"), Task: "Fix the failing test."}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// markdownPunct is CommonMark's backslash escape of ASCII punctuation.
var markdownPunct = regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")

// reportText is the run's report.md with Markdown's backslash escapes undone, so that a
// reason can be looked for as written.
func reportText(res *runner.Result) string {
	return markdownPunct.ReplaceAllString(report.Markdown(res), "$1")
}

// requireNoForgery fails when a forged text reached any message of the transcript.
func requireNoForgery(t *testing.T, res *runner.Result, forged string) {
	t.Helper()
	for i, m := range res.Leaf.Messages {
		if m.Role == "tool" && m.Content != nil && strings.Contains(*m.Content, forged) {
			t.Errorf("message %d, a tool observation, holds the forged %q: %.300q", i, forged, *m.Content)
		}
	}
}

func TestHostileTranscriptForgery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script, forged string
		refusal        string // what the report says when the dumpable executor is reached
	}{
		{"forge-current-call.json", "FORGED", "a line for call 1 without its nonce"},
		{"forge-later-call.json", "FORGED", "a line for call 3 with a wrong nonce"},
		{"oversize-line.json", "AAAAAAAA", "a line over 524288 bytes"},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.script, ".json")
		t.Run(name+"/Hardened", func(t *testing.T) {
			t.Parallel()
			res := runHostile(t, tt.script, executorPath)
			if got := res.ExitReason(); got != leaf.ExitAgent {
				t.Fatalf("exit reason %q (error %q), want agent: the attack was refused inside the sandbox", got, res.Leaf.Error)
			}
			requireNoForgery(t, res, tt.forged)
		})
		t.Run(name+"/Dumpable", func(t *testing.T) {
			t.Parallel()
			res := runHostile(t, tt.script, weakExecutor(t))
			if got := res.ExitReason(); got != leaf.ExitToolError {
				t.Fatalf("exit reason %q, want tool_error", got)
			}
			for _, want := range []string{sandbox.ErrUntrustedOutput.Error(), tt.refusal} {
				if !strings.Contains(res.Leaf.Error, want) {
					t.Errorf("error %q does not say %q", res.Leaf.Error, want)
				}
				if !strings.Contains(reportText(res), want) {
					t.Errorf("the report does not say %q", want)
				}
			}
			requireNoForgery(t, res, tt.forged)
		})
	}
}

func TestHostilePtraceAttach(t *testing.T) {
	t.Parallel()
	res := runHostile(t, "ptrace-attach.json", executorPath)
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
}

func TestHostileOversizeGlob(t *testing.T) {
	t.Parallel()
	res := runHostile(t, "oversize-glob.json", executorPath)
	if got := res.ExitReason(); got != leaf.ExitToolError {
		t.Fatalf("exit reason %q, want tool_error", got)
	}
	const want = `calling sandbox tool Glob: the executor could not answer: the "Glob" observation takes `
	if !strings.Contains(res.Leaf.Error, want) || !strings.Contains(reportText(res), want) {
		t.Errorf("error %q (or the report) does not say %q", res.Leaf.Error, want)
	}
	for _, m := range res.Leaf.Messages {
		if m.Content != nil && len(*m.Content) > 100_000 {
			t.Errorf("a %s message of %d bytes reached the transcript", m.Role, len(*m.Content))
		}
	}
}

func TestHostileForkBomb(t *testing.T) {
	t.Parallel()
	res := runHostile(t, "fork-bomb.json", executorPath)
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
	var note string
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "A command timed out; ") {
			note = n
		}
	}
	var killed int
	if _, err := fmt.Sscanf(note, "A command timed out; %d leftover processes were killed.", &killed); err != nil || killed < 10 {
		t.Fatalf("notes %q: want one saying the bomb's leftover processes were killed", res.Notes)
	}
	if !strings.Contains(reportText(res), note) {
		t.Errorf("the report lacks the note %q", note)
	}
}
