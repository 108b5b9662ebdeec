package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// runCmd is `frognano run`: one agent run on a local checkout. It exits 0 whenever the run
// completed, whatever the agent achieved; a broken setup is a setupError with one clear line.
func runCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Runner(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	// What the run prints (the model's calls, setup's lines, test names) passes the one
	// redactor, which config.Runner gave the configuration's secrets.
	stdout, stderr = redactingWriter{stdout}, redactingWriter{stderr}
	fs := newFlagSet("run", stderr)
	repo := fs.String("repo", "", "the git checkout to work on (read, never modified)")
	task := fs.String("task", "", "the task, as text")
	taskFile := fs.String("task-file", "", "a file holding the task")
	out := fs.String("out", "", "folder for patch.diff, trajectory.json and report.md")
	bindRunnerFlags(fs, &cfg)
	bindSetupFlags(fs, &cfg)
	fs.IntVar(&cfg.Attempts.N, "attempts", cfg.Attempts.N, "independent attempts; frognano's own tests choose the patch (FROGNANO_ATTEMPTS, at most FROGNANO_MAX_ATTEMPTS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var missing []string
	if *repo == "" {
		missing = append(missing, "--repo")
	}
	if *out == "" {
		missing = append(missing, "--out")
	}
	if len(missing) > 0 {
		return usageError{"missing " + strings.Join(missing, " and ")}
	}
	text, err := readTask(*task, *taskFile)
	if err != nil {
		return err
	}
	if err := checkRunnerConfig(cfg); err != nil {
		return usageError{err.Error()}
	}
	if err := config.CheckAttempts(cfg.Attempts); err != nil {
		return usageError{err.Error()}
	}
	repoDir, err := filepath.Abs(*repo)
	if err != nil {
		return usageError{err.Error()}
	}
	if _, err := runner.HeadCommit(ctx, repoDir); err != nil {
		return setupError{err}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return setupError{fmt.Errorf("creating the output folder: %w", err)}
	}

	docker, err := sandbox.NewClient()
	if err != nil {
		return setupError{err}
	}
	defer docker.Close()
	// This run's sandboxes are told apart from the service's (same host, same default owner) and
	// from other runs', so that what an interrupted run left can be removed here while a run
	// still going in another terminal keeps its own.
	cfg.Sandbox.Owner = runOwner(cfg.Sandbox.Owner)
	cfg.Sandbox.Instance = sandbox.ProcessInstance(os.Getpid())
	if n, err := sandbox.PruneIf(ctx, docker, cfg.Sandbox.Owner, func(instance string) bool { return !sandbox.ProcessAlive(instance) }); err != nil {
		fmt.Fprintf(stderr, "frognano: removing the sandboxes of interrupted runs: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(stderr, "frognano: removed %d sandbox(es) that interrupted runs left behind\n", n)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := runner.New(docker, cfg, log)
	if err := r.Preflight(ctx); err != nil {
		return setupError{err}
	}

	start := time.Now()
	fmt.Fprintf(stderr, "frognano: running %s on %s (max %d steps, %s)\n", cfg.Leaf.Model, repoDir, cfg.Leaf.MaxSteps, cfg.Leaf.MaxTime)
	prefix := func(k int) string {
		if cfg.Attempts.N > 1 {
			return fmt.Sprintf("attempt %d | ", k)
		}
		return ""
	}
	term := &terminal{out: stderr, prefix: prefix}
	spec := runner.Spec{RepoDir: repoDir, Task: text, Observer: term}
	res, err := r.RunAll(ctx, spec, func(k int, s leaf.Step) {
		term.println(prefix(k) + progressLine(s, cfg.Leaf.MaxSteps))
	})
	if err != nil {
		var se *runner.SetupError
		if errors.As(err, &se) {
			return setupError{err}
		}
		return err
	}
	if err := writeOutputs(*out, res); err != nil {
		return err
	}
	if err := writeAttemptOutputs(*out, res); err != nil {
		return err
	}
	fmt.Fprint(stderr, attemptLines(res))
	fmt.Fprint(stderr, summaryLines(res, *out, time.Since(start)))
	if res.Cancelled {
		return context.Canceled
	}
	if res.EnvironmentRefused() {
		return fmt.Errorf("frognano refused the environment the repository's setup script built (see %s)", filepath.Join(*out, "report.md"))
	}
	if res.SetupFailed != "" {
		return fmt.Errorf("the repository's setup script failed: %s (see %s)", res.SetupFailed, filepath.Join(*out, "report.md"))
	}
	return nil
}

func readTask(task, file string) (string, error) {
	switch {
	case task != "" && file != "":
		return "", usageError{"give --task or --task-file, not both"}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usageError{fmt.Sprintf("reading the task file: %v", err)}
		}
		task = string(b)
	}
	if strings.TrimSpace(task) == "" {
		return "", usageError{"no task: give --task TEXT or --task-file FILE"}
	}
	return task, nil
}

// progressLine is one line per step: step, tools with a short form of their arguments, elapsed.
func progressLine(s leaf.Step, maxSteps int) string {
	var tools []string
	for _, tc := range s.Assistant.ToolCalls {
		tools = append(tools, tc.Function.Name+" "+report.ArgSummary(tc.Function.Name, tc.Function.Arguments))
	}
	what := strings.Join(tools, " | ")
	if what == "" {
		what = "(final answer)"
	}
	return fmt.Sprintf("step %3d/%d  %-60s  %6.1fs", s.Index+1, maxSteps, what, s.Elapsed.Seconds())
}

// writeOutputs writes the run's three files, through the one redactor like everything
// frognano publishes. The patch cannot be redacted: the runner refused one that holds a secret
// (Config.SecretValues), and its note says so.
func writeOutputs(dir string, res *runner.Result) error {
	traj, err := json.Marshal(res.Trajectory())
	if err != nil {
		return fmt.Errorf("encoding the trajectory: %w", err)
	}
	if traj, err = githubapp.RedactJSON(traj); err != nil {
		return fmt.Errorf("redacting the trajectory: %w", err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, traj, "", "  "); err != nil {
		return fmt.Errorf("indenting the trajectory: %w", err)
	}
	files := map[string][]byte{
		"patch.diff":      res.PatchBytes(),
		"trajectory.json": append(indented.Bytes(), '\n'),
		"report.md":       []byte(githubapp.RedactRun(report.Markdown(res))),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

func summaryLines(res *runner.Result, out string, elapsed time.Duration) string {
	var b strings.Builder
	steps := 0
	if res.Leaf != nil {
		steps = len(res.Leaf.Steps)
	}
	b.WriteString(environmentLines(res))
	fmt.Fprintf(&b, "frognano: finished: exit reason %s after %d steps in %s\n", res.ExitReason(), steps, elapsed.Round(time.Second))
	switch p := res.PatchBytes(); {
	case p != nil:
		fmt.Fprintf(&b, "frognano: patch: %d file(s), %d bytes\n", len(res.Patch.Files), len(p))
	case res.Patch != nil && res.Patch.TooLarge:
		fmt.Fprintf(&b, "frognano: patch: too large (%d bytes), reported only\n", res.Patch.Size)
	case len(res.SecretFindings) > 0: // refused for them: a kept patch is the first case
		fmt.Fprintf(&b, "frognano: patch: none: refused, it holds what looks like a secret (FROGNANO_SECRETS=block; %s lists everything found):\n",
			filepath.Join(out, "report.md"))
		b.WriteString(secretLines(res.SecretFindings))
	case res.Refused != nil && !res.Refused.Environment:
		b.WriteString("frognano: patch: none\n")
		b.WriteString(report.RefusalLines(res, "frognano: "))
	default:
		b.WriteString("frognano: patch: none\n")
	}
	if res.PatchBytes() != nil && len(res.SecretFindings) > 0 {
		b.WriteString("frognano: WARNING: the patch holds what looks like a secret; it is kept because FROGNANO_SECRETS=warn:\n")
		b.WriteString(secretLines(res.SecretFindings))
	}
	if t := res.TestsBefore; t != nil {
		fmt.Fprintf(&b, "frognano: tests before: %s\n", testLine(t))
	}
	if t := res.TestsAfter; t != nil {
		fmt.Fprintf(&b, "frognano: tests after:  %s\n", testLine(t))
	}
	if c := res.Comparison; c != nil {
		fmt.Fprintf(&b, "frognano: fixed %d, broken %d, still failing %d\n", len(c.Fixed), len(c.Broken), len(c.StillFailing))
	}
	if t := res.TestTrust(); len(t) > 0 {
		b.WriteString("frognano: WARNING: the test result may not be trustworthy: the patch changes files that can change what the tests report:\n")
		for _, f := range t {
			fmt.Fprintf(&b, "frognano:   %s (%s)\n", report.Visible(f.Path), report.Visible(f.Why))
		}
	}
	if n := len(res.Suppressions) + res.SuppressionsMore; n > 0 {
		fmt.Fprintf(&b, "frognano: WARNING: the patch adds %d suppression comment(s) that tell a scanner to skip findings:\n", n)
		for i, s := range res.Suppressions {
			if i == 10 {
				fmt.Fprintf(&b, "frognano:   and %d more (report.md lists them)\n", n-i)
				break
			}
			base := ""
			if s.InBase {
				base = "; in the base, covering the patch's lines"
			}
			fmt.Fprintf(&b, "frognano:   %s line %d: %s (%s%s)\n", report.Visible(s.File), s.Line, report.Visible(s.Text), s.For, base)
		}
	}
	fmt.Fprintf(&b, "frognano: wrote %s\n", filepath.Join(out, "{patch.diff,trajectory.json,report.md}"))
	return b.String()
}

// secretLines name what the secrets check blamed on the patch, one finding a line (rule, file,
// line; never a value), at most 10 and how many more.
func secretLines(fs []secrets.Finding) string {
	var b strings.Builder
	for i, f := range fs {
		if i == 10 {
			fmt.Fprintf(&b, "frognano:   and %d more\n", len(fs)-i)
			break
		}
		fmt.Fprintf(&b, "frognano:   %s in %s %s\n", report.Visible(f.Rule), report.Visible(f.File), f.Where())
	}
	return b.String()
}

// environmentLines say which image the run's sandboxes came from, and the end of a failed
// setup's log.
func environmentLines(res *runner.Result) string {
	line := report.EnvironmentLine(res)
	if line == "" {
		return ""
	}
	if res.SetupFailed == "" {
		return "frognano: environment: " + line + "\n"
	}
	var b strings.Builder
	if res.EnvironmentRefused() {
		b.WriteString(report.RefusalLines(res, "frognano: "))
	} else {
		fmt.Fprintf(&b, "frognano: setup failed: %s\n", report.Visible(res.SetupFailed))
	}
	if tail := envpkg.LastLines(res.SetupLog(), 10); tail != "" {
		for _, l := range strings.Split(tail, "\n") {
			fmt.Fprintf(&b, "frognano:   | %s\n", report.Visible(l))
		}
	}
	return b.String()
}

func testLine(t *runner.TestRun) string {
	if t.Error != "" {
		return "error: " + t.Error
	}
	if t.TimedOut {
		return fmt.Sprintf("timed out after %s", t.Duration.Round(time.Second))
	}
	return fmt.Sprintf("exit %d in %s", t.ExitCode, t.Duration.Round(100*time.Millisecond))
}

// redactingWriter passes what it writes through the one redactor. `frognano run` writes whole
// lines at a time, so a secret is never split between two writes.
type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, githubapp.RedactRun(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// terminal shows a run's progress on `frognano run`'s standard error: setup's lines as they
// come, and the waits for the model server and for sandboxes. Calls come from several
// goroutines at once.
type terminal struct {
	mu     sync.Mutex
	out    io.Writer
	prefix func(k int) string // "attempt k | " when the run makes several attempts
}

func (t *terminal) println(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.out, line)
}

// SetupLine shows the repository's text as it comes, without terminal control characters.
func (t *terminal) SetupLine(line string) { t.println("setup | " + report.Visible(line)) }

func (t *terminal) ModelWait(k int, w leaf.ModelWait) {
	if w.Waiting() {
		t.println(fmt.Sprintf("%swaiting for the model server: %s", t.prefix(k), w))
	} else {
		t.println(t.prefix(k) + "the model server answers again")
	}
}

func (t *terminal) SandboxWait(k int, w sandbox.SlotWait) {
	if w.Waiting() {
		t.println(fmt.Sprintf("%swaiting for a free sandbox for %s (%d of %d in use, FROGNANO_MAX_SANDBOXES)", t.prefix(k), w.For(), w.InUse, w.Cap))
	} else {
		t.println(fmt.Sprintf("%sa sandbox is free for %s", t.prefix(k), w.For()))
	}
}

func (t *terminal) TestsStart(int, bool) {}
