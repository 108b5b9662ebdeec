package audit

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/runner/sandbox"
)

// ScannerRun is one of the operator's scanners run on the patched tree. When Problem is set
// (it crashed, timed out, wrote no or unreadable SARIF) no finding was taken from it, and
// nothing else of the run changes.
type ScannerRun struct {
	Name string
	// Problem says why no findings were taken, as a sentence's end ("timed out after 2m0s;
	// no findings taken"); "" when its SARIF was read.
	Problem string
	// ExitCode is the command's exit code, -1 when it did not exit by itself. A non-zero
	// exit with readable SARIF is not a problem: many scanners exit 1 when they find
	// something, so the SARIF decides.
	ExitCode int
	Duration time.Duration
	// Tail is the end of the command's output (untrusted), kept only with a Problem, for the
	// operator to see why.
	Tail string
	// Code says whether the scanner runs the repository's code, and who says so: when it
	// does, or nobody knows, that code (which the patch may change) runs as the scanner and
	// can change what it reports, so its findings are not promised.
	Code scanner.CodeJudgement
	// Tools are the known tools it is (scanner.Tools).
	Tools []string
	// ConfigFrom is the commit its configuration files were taken from; Reset the files the
	// patched tree had otherwise, which it scanned as that commit has them (or not at all).
	// Findings in those files are not kept: the scanner did not read the patch's lines there.
	ConfigFrom string
	Reset      []scanner.Reset
	// Config are the patterns of its configuration files (its tools' and the operator's);
	// none means a patch can change how it is configured.
	Config []string
	scanner.Findings
}

// Where a scanner writes its SARIF: under the workspace's .git, in a file named after the
// scanner. The workspace volume survives Quiesce (the tmpfs /tmp does not), and .git is out of
// the tree the scanner reads and of every patch. No place in the sandbox is out of reach of
// code the scanner itself runs (it is the same user, in the same process): docs/security.md.
const scanDir = ".git/frognano-scan"

// TailSize is the most of a failed scanner's output that ScannerRun.Tail keeps.
const TailSize = 2000

// scanEnv is added to each scanner's environment. Python must not put the working directory
// (the repository) first on its path: `python3 -m bandit` would run a bandit/ package the patch
// added instead of the installed one (PYTHONSAFEPATH, Python 3.11+), nor read the user's site
// folder. HOME is the sandbox's fresh /tmp, so `bash -l` reads no start file of the repository.
var scanEnv = []string{"PYTHONSAFEPATH=1", "PYTHONNOUSERSITE=1"}

// Scanners runs the operator's scanners (FROGNANO_SCANNERS) one after another on diff, the
// checked patch, and records what each found on the lines the patch added or changed (added,
// from Added; nil when they could not be read: then none runs, and a note says so). Which
// scanners run is the operator's setting alone: nothing of the repository or the patch
// decides it. Each scans the patched tree with its configuration files as the base branch has
// them (scanner.Trees, made on the host from git's objects), in a fresh sandbox bounded by
// timeout. The result is one ScannerRun per scanner that ran, in the configured order
// (Result.Scanners); none when the run was cancelled first.
func (a *Auditor) Scanners(ctx context.Context, scanners []scanner.Scanner, timeout time.Duration, diff []byte, added []scanner.Added) []ScannerRun {
	if added == nil {
		a.Note("The operator's scanners were not run: the lines the patch changes could not be read.")
		return nil
	}
	changed := scanner.ChangedLines(added)
	// The base branch's configuration: a follow-up's checkout is frognano's branch, where an
	// earlier run's patch may have changed a scanner's configuration.
	configAt := a.ConfigAt
	trees, err := scanner.NewTrees(ctx, patch.HostGit(a.RepoDir), a.Base, configAt, diff)
	if err != nil {
		a.Note("The operator's scanners were not run: the patched tree could not be made on the host: " + err.Error())
		return nil
	}
	defer trees.Close()
	// A file the patch moved is new where it now is: every line of it counts (Trees.Moved).
	changed = changed.WithWhole(trees.Moved())
	var runs []ScannerRun
	for _, s := range scanners {
		if ctx.Err() != nil { // cancelled: the run reports itself as such
			break
		}
		var sr ScannerRun
		scanDiff, resets, err := trees.For(ctx, s.Config)
		if err != nil {
			sr = ScannerRun{Name: s.Name, ExitCode: -1, Problem: "its configuration files could not be taken from the base: " + err.Error() + "; not run"}
		} else {
			sr = a.runScanner(ctx, s, timeout, scanDiff, changed.Without(scanner.Files(resets)))
		}
		sr.Code, sr.Tools, sr.ConfigFrom, sr.Reset = s.Code, s.Tools, configAt, resets
		for _, p := range s.Config {
			sr.Config = append(sr.Config, p.String())
		}
		a.Log.Info("scanner done", "scanner", s.Name, "duration", sr.Duration, "exit_code", sr.ExitCode,
			"findings", len(sr.Kept)+sr.More, "problem", sr.Problem != "", "config_reset", len(resets))
		runs = append(runs, sr)
	}
	return runs
}

// runScanner runs s in a fresh sandbox made exactly as the tests after's (the run's
// environment image and limits, offline, no credential; the untouched checkout), with diff
// applied (the patch, its configuration files reset: Scanners), then ends every process left
// in it (Quiesce) and reads the SARIF file out as untrusted bytes, bounded.
func (a *Auditor) runScanner(ctx context.Context, s scanner.Scanner, timeout time.Duration, diff []byte, changed scanner.Changed) (sr ScannerRun) {
	sr = ScannerRun{Name: s.Name, ExitCode: -1}
	start := time.Now()
	defer func() { sr.Duration = time.Since(start) }()
	fail := func(why string) ScannerRun {
		sr.Problem = why + "; no findings taken"
		return sr
	}
	sb, err := sandbox.NewFrom(ctx, a.Docker, a.Sandbox, a.Repo, a.RunID, "scanner-"+s.Name)
	if err != nil {
		return fail("its sandbox could not be made: " + err.Error())
	}
	defer sb.Close()
	if err := applyForScan(ctx, sb, diff); err != nil {
		return fail("the patch could not be applied in its sandbox: " + err.Error())
	}
	if res, err := sb.Exec(ctx, []string{"mkdir", "-p", scanDir}, nil, time.Minute, 4096); err != nil || res.ExitCode != 0 {
		return fail("its SARIF folder could not be made")
	}
	rel := scanDir + "/" + s.Name + ".sarif"
	abs := strings.TrimSuffix(cmp.Or(a.Sandbox.Workdir, sandbox.DefaultWorkdir), "/") + "/" + rel
	cmd := strings.ReplaceAll(s.Command, scanner.Placeholder, shellQuote(abs))
	out := &tailBuffer{max: TailSize}
	res, err := sb.Run(ctx, sandbox.ExecSpec{Argv: []string{"/bin/bash", "-lc", cmd}, Env: append([]string{scanner.EnvSARIF + "=" + abs}, scanEnv...),
		Timeout: timeout, Output: out})
	sr.Tail = out.String()
	if why := sb.StopReason(context.WithoutCancel(ctx)); why != "" {
		return fail("its sandbox was stopped: " + why)
	}
	switch {
	case err != nil:
		return fail("it could not be run: " + err.Error())
	case res.TimedOut:
		return fail("timed out after " + timeout.String())
	}
	sr.ExitCode = res.ExitCode
	data, why := readSARIF(ctx, sb, rel)
	switch {
	case why == errNoSARIF && res.ExitCode != 0:
		return fail(fmt.Sprintf("crashed: exited %d and wrote no SARIF", res.ExitCode))
	case why != "":
		return fail(why)
	}
	found, err := scanner.Read(data, cmp.Or(a.Sandbox.Workdir, sandbox.DefaultWorkdir), changed)
	if err != nil {
		return fail("wrote SARIF that could not be read (" + err.Error() + ")")
	}
	sr.Findings, sr.Tail = found, ""
	return sr
}

// shellQuote puts s in single quotes for bash: the SARIF path the scanner's command names.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

const errNoSARIF = "wrote no SARIF"

// applyForScan applies diff in the scanner's sandbox as runner applies the patch for the tests
// after, and marks the files it adds as tracked (--intent-to-add): a scanner that lists files
// with git (semgrep) would otherwise skip a new file that an ignore rule names, and the
// patch's diff need not follow its own .gitignore. An empty diff (the patch changed only
// configuration files) changes nothing.
func applyForScan(ctx context.Context, sb *sandbox.Sandbox, diff []byte) error {
	if len(diff) == 0 {
		return nil
	}
	res, err := sb.Exec(ctx, []string{"git", "-c", "core.hooksPath=/dev/null", "apply", "--whitespace=nowarn", "--intent-to-add", "-"},
		bytes.NewReader(diff), 2*time.Minute, 1<<20)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("git apply exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// readSARIF reads the scanner's SARIF file (rel, under the workspace) out of sb. First every
// process of the sandbox ends (Quiesce), so nothing the scanner or the model's code started
// can swap the file while it is read; then, as the sandbox user (who could write anything
// there anyway), the file is read only when it and its folders are what frognano made: no
// symbolic link, no FIFO or device, at most scanner.MaxSARIFBytes. why says what was wrong.
func readSARIF(ctx context.Context, sb *sandbox.Sandbox, rel string) (data []byte, why string) {
	if err := sb.Quiesce(ctx); err != nil {
		return nil, "its SARIF could not be read: " + err.Error()
	}
	const script = `f=$1
[ -d .git ] && [ ! -L .git ] || exit 90
[ -d ` + scanDir + ` ] && [ ! -L ` + scanDir + ` ] || exit 90
[ -L "$f" ] && exit 93
[ -e "$f" ] || exit 92
[ -f "$f" ] || exit 94
exec head -c "$2" -- "$f"`
	max := int64(scanner.MaxSARIFBytes)
	res, err := sb.Exec(ctx, []string{"/bin/sh", "-c", script, "sh", rel, fmt.Sprint(max + 1)}, nil, time.Minute, max+1)
	switch {
	case err != nil:
		return nil, "its SARIF could not be read: " + err.Error()
	case res.ExitCode == 90:
		return nil, "the folder it was to write SARIF in was replaced"
	case res.ExitCode == 92:
		return nil, errNoSARIF
	case res.ExitCode == 93:
		return nil, "its SARIF file is a symbolic link, which frognano does not follow"
	case res.ExitCode == 94:
		return nil, "its SARIF file is not a regular file"
	case res.ExitCode != 0 || res.TimedOut:
		return nil, fmt.Sprintf("its SARIF could not be read (exit %d)", res.ExitCode)
	case res.Truncated || int64(len(res.Stdout)) > max:
		return nil, fmt.Sprintf("its SARIF file is larger than %d MiB", max>>20)
	}
	return res.Stdout, ""
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s, _ := clip.Tail(strings.ToValidUTF8(string(t.b), "\uFFFD"), t.max)
	return s
}
