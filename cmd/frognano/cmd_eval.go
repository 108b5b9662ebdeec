package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/eval"
	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// evalCmd is `frognano eval`: SWE-bench-style tasks run as labelled issues are (package eval),
// `eval compare`, and `eval tasks --from-history`. It exits 0 when every task ran, whatever
// the model achieved.
func evalCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "compare":
			return evalCompareCmd(args[1:], stdout, stderr)
		case "tasks":
			return evalTasksCmd(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	cfg, err := config.Runner(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	bar := isTerminal(stderr)
	stdout, stderr = redactingWriter{stdout}, redactingWriter{stderr}
	fs := newFlagSet("eval", stderr)
	tasksFile := fs.String("tasks", "", "the task file: JSON Lines in SWE-bench's task format (docs/eval.md)")
	out := fs.String("out", "", "the output folder; an earlier evaluation in it is resumed")
	repos := fs.String("repos", "", "a folder of clones, DIR/OWNER/NAME, for tasks that give neither repo_path nor repo_url")
	rerun := fs.Bool("rerun", false, "discard what an earlier evaluation in --out finished and run every task")
	jobs := fs.Int("jobs", 0, "tasks at once (0: half of FROGNANO_MAX_SANDBOXES, at least 1); sandboxes and model requests stay within their limits")
	var allow eval.Allow
	fs.Var((*stringsFlag)(&allow.Images), "allow-image", "an image tasks may name besides the sandbox image and FROGNANO_SANDBOX_IMAGES's (repeat it for more)")
	fs.BoolVar(&allow.PlainURLs, "allow-plain-urls", false, "let tasks clone over http:// and git://, which neither encrypt nor authenticate the server")
	fs.BoolVar(&allow.LocalAddresses, "allow-local-urls", false, "let tasks clone from loopback, link-local, cloud metadata and unspecified addresses")
	bindRunnerFlags(fs, &cfg)
	bindSetupFlags(fs, &cfg)
	fs.IntVar(&cfg.Attempts.N, "attempts", cfg.Attempts.N, "independent attempts per task; frognano's own tests choose the patch (FROGNANO_ATTEMPTS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tasksFile == "" || *out == "" {
		return usageError{"give --tasks FILE and --out DIR"}
	}
	if err := checkRunnerConfig(cfg); err != nil {
		return usageError{err.Error()}
	}
	if err := config.CheckAttempts(cfg.Attempts); err != nil {
		return usageError{err.Error()}
	}
	f, err := os.Open(*tasksFile)
	if err != nil {
		return usageError{fmt.Sprintf("reading the task file: %v", err)}
	}
	tasks, bad, err := eval.ParseTasks(f)
	f.Close()
	if err != nil {
		return setupError{err}
	}
	for _, e := range bad {
		fmt.Fprintf(stderr, "frognano: %s: %s\n", *tasksFile, report.Visible(e.Error()))
	}
	if len(tasks) == 0 {
		return usageError{fmt.Sprintf("%s holds no usable task", *tasksFile)}
	}
	r, done, err := newEvalRunner(ctx, &cfg, stderr, true)
	if err != nil {
		return err
	}
	defer done()
	opt := eval.Options{Runner: r, Out: *out, TaskDir: filepath.Dir(*tasksFile), Repos: *repos, Allow: allow}
	tasks, refused := eval.Check(ctx, tasks, opt)
	for _, e := range refused {
		fmt.Fprintf(stderr, "frognano: %s: %s\n", *tasksFile, report.Visible(e.Error()))
	}
	if len(tasks) == 0 {
		return usageError{fmt.Sprintf("%s holds no task this evaluation may run", *tasksFile)}
	}
	bad = append(bad, refused...)
	if *jobs <= 0 {
		*jobs = max(1, cfg.Sandbox.Slots.Cap()/2)
	}
	term := &terminal{out: stderr, prefix: func(int) string { return "" }}
	fmt.Fprintf(stderr, "frognano: evaluating %s on %d task(s) from %s, %d at once\n", cfg.Leaf.Model, len(tasks), *tasksFile, *jobs)
	opt.Jobs, opt.Rerun, opt.Model = *jobs, *rerun, cfg.Leaf.Model
	opt.WriteRun = func(dir string, res *runner.Result) error {
		if err := writeOutputs(dir, res); err != nil {
			return err
		}
		return writeAttemptOutputs(dir, res)
	}
	opt.Redact, opt.Bar = githubapp.RedactRun, bar
	opt.Progress = func(line string) { term.println("frognano: " + line) }
	opt.OnStep = func(id string, k int, s leaf.Step) {
		prefix := report.Visible(id) + " | "
		if cfg.Attempts.N > 1 {
			prefix += fmt.Sprintf("attempt %d | ", k)
		}
		term.println(prefix + progressLine(s, cfg.Leaf.MaxSteps))
	}
	sum, err := eval.Run(ctx, tasks, bad, opt)
	if err != nil {
		return err
	}
	recs := make([]*eval.Record, len(sum.Records))
	for i := range sum.Records {
		recs[i] = &sum.Records[i]
	}
	rate := eval.RateOf(recs)
	fmt.Fprintf(stderr, "frognano: %s; errors (counted apart): %d; kept from before: %d\n", rate, rate.Errors, sum.Kept)
	fmt.Fprintf(stderr, "frognano: wrote %s\n", filepath.Join(*out, "{report.md,results.jsonl,predictions.jsonl}"))
	if sum.Stopped {
		fmt.Fprintf(stderr, "frognano: stopped; run the same command again to finish the other tasks\n")
		return context.Canceled
	}
	return nil
}

// newEvalRunner makes the runner as `frognano run` does: sandboxes told apart from the
// service's and other runs', those an interrupted run left removed, the set-up checked
// (the model server too when model is set).
func newEvalRunner(ctx context.Context, cfg *runner.Config, stderr io.Writer, model bool) (*runner.Runner, func(), error) {
	docker, err := sandbox.NewClient()
	if err != nil {
		return nil, nil, setupError{err}
	}
	cfg.Sandbox.Owner = runOwner(cfg.Sandbox.Owner)
	cfg.Sandbox.Instance = sandbox.ProcessInstance(os.Getpid())
	if n, err := sandbox.PruneIf(ctx, docker, cfg.Sandbox.Owner, func(instance string) bool { return !sandbox.ProcessAlive(instance) }); err != nil {
		fmt.Fprintf(stderr, "frognano: removing the sandboxes of interrupted runs: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(stderr, "frognano: removed %d sandbox(es) that interrupted runs left behind\n", n)
	}
	r := runner.New(docker, *cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if model {
		if err := r.Preflight(ctx); err != nil {
			docker.Close()
			return nil, nil, setupError{err}
		}
	}
	return r, func() { docker.Close() }, nil
}

// evalCompareCmd is `frognano eval compare DIR_A DIR_B`.
func evalCompareCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval compare", stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() != 2 {
		return usageError{"give two evaluation folders: frognano eval compare DIR_A DIR_B"}
	}
	c, err := eval.CompareDirs(fs.Arg(0), fs.Arg(1))
	if err != nil {
		return usageError{err.Error()}
	}
	fmt.Fprint(stdout, c.String())
	return nil
}

// evalTasksCmd is `frognano eval tasks --from-history REPO --out FILE`, and with
// `--from-export EXPORT` the tasks of the merged pull requests of an export
// (docs/eval.md#the-tasks-of-your-merged-pull-requests).
func evalTasksCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Runner(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	stdout, stderr = redactingWriter{stdout}, redactingWriter{stderr}
	fs := newFlagSet("eval tasks", stderr)
	from := fs.String("from-history", "", "a local clone whose history to mine")
	out := fs.String("out", "", "the task file to write")
	branch := fs.String("branch", "", "the branch whose first-parent history is mined (default: the clone's HEAD)")
	since := fs.String("since", "", `only commits after this date, as git reads it ("2026-01-01", "6 months ago")`)
	limit := fs.Int("limit", 50, "examine the newest N commits at most (0: all)")
	name := fs.String("name", "", `"owner/name" for the tasks' repo field (it picks the image from FROGNANO_SANDBOX_IMAGES)`)
	fromExport := fs.String("from-export", "", "the records file of frognano export: mine the merge commits of the merged pull requests it labels (of --name's repository), each task's problem statement the issue the run was given")
	bindRunnerFlags(fs, &cfg)
	bindSetupFlags(fs, &cfg)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" || *out == "" {
		return usageError{"give --from-history REPO and --out FILE"}
	}
	var commits []eval.Commit
	if *fromExport != "" {
		var err error
		if commits, *name, err = exportCommits(*fromExport, *name); err != nil {
			return err
		}
	}
	if _, err := runner.HeadCommit(ctx, *from); err != nil {
		return setupError{err}
	}
	r, done, err := newEvalRunner(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer done()
	tasks, skipped, err := eval.Mine(ctx, eval.MineOptions{
		Runner: r, Repo: *from, TaskDir: filepath.Dir(*out), Branch: *branch, Since: *since, Limit: *limit, Name: *name, TestCmd: cfg.TestCmd,
		Commits:  commits,
		Progress: func(line string) { fmt.Fprintln(stderr, "frognano: "+report.Visible(line)) },
	})
	if err != nil {
		return setupError{fmt.Errorf("mining %s: %w", *from, err)}
	}
	var b strings.Builder
	for _, t := range tasks {
		line, err := eval.TaskLine(t)
		if err != nil {
			return err
		}
		b.WriteString(line + "\n")
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		return setupError{fmt.Errorf("writing the task file: %w", err)}
	}
	fmt.Fprintf(stderr, "frognano: wrote %d task(s) to %s (%d commit(s) skipped)\n", len(tasks), *out, len(skipped))
	if dir := eval.MinedRepos(*from, filepath.Dir(*out)); dir != "" && len(tasks) > 0 {
		// A task's repo_path must lie under the task file's folder or --repos (docs/eval.md).
		fmt.Fprintf(stderr, "frognano: the clone is not under the task file's folder: evaluate with --repos %s\n", report.Visible(dir))
	}
	return nil
}

// exportCommits are the merge commits of the merged pull requests the export file labels, of
// repository name (OWNER/REPO; "" when the export holds one repository only, which is then
// the name returned), each with its task's statement and id (OWNER__REPO-prN).
func exportCommits(file, name string) ([]eval.Commit, string, error) {
	merged, err := export.MergedPullRequests(file)
	if err != nil {
		return nil, name, usageError{err.Error()}
	}
	repos := map[string]bool{}
	for _, m := range merged {
		repos[m.Repository] = true
	}
	if name == "" {
		if len(repos) > 1 {
			return nil, name, usageError{fmt.Sprintf("%s holds merged pull requests of %d repositories: give --name OWNER/REPO, the one --from-history is a clone of", file, len(repos))}
		}
		for r := range repos {
			name = r
		}
	}
	var commits []eval.Commit
	for _, m := range merged {
		if !strings.EqualFold(m.Repository, name) {
			continue
		}
		commits = append(commits, eval.Commit{SHA: m.MergeCommit, Statement: m.Statement,
			ID: fmt.Sprintf("%s-pr%d", strings.ReplaceAll(m.Repository, "/", "__"), m.PullRequest)})
	}
	if len(commits) == 0 {
		return nil, name, usageError{fmt.Sprintf("%s holds no merged pull request of %s with its merge commit", file, cmp.Or(name, "any repository"))}
	}
	return commits, name, nil
}

// stringsFlag is a flag that may be given several times; each value is kept, in order.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }

func (f *stringsFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty")
	}
	*f = append(*f, strings.TrimSpace(s))
	return nil
}

// isTerminal reports whether w is a terminal, where the overall progress bar is drawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
