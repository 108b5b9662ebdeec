package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
)

// Options configures Run.
type Options struct {
	// Runner runs each task exactly as the service runs a labelled issue (RunAll: its
	// environments, sandboxes, budgets, attempts, and the process-wide sandbox slots and model
	// limiter of its Config).
	Runner *runner.Runner
	Out    string // the output folder
	// TaskDir is the task file's folder ("": this process's folder): a repo_path is read
	// from it, and must resolve inside it or Repos.
	TaskDir string
	// Repos is a folder of clones, DIR/OWNER/NAME (or DIR/OWNER__NAME), for tasks that name
	// only their repo; a repo_path not found under TaskDir is read from it.
	Repos string
	// Allow is what the operator lets tasks use beyond the defaults (images, plain URLs,
	// local addresses). A task that uses anything else is refused (Check).
	Allow Allow
	// Jobs is how many tasks run at once (their sandboxes and model requests are bounded
	// by the Runner's limits besides); <= 0 is 1.
	Jobs int
	// Rerun discards what an earlier evaluation in Out finished.
	Rerun bool
	// Model is model_name_or_path in predictions.jsonl.
	Model string
	// WriteRun writes a task's run (its trajectory, patch and report) into its folder, as
	// `frognano run` writes its own: redacted.
	WriteRun func(dir string, res *runner.Result) error
	// Redact is applied to every text Run writes that came from the model or the sandbox
	// (the tests' output, error messages); nil leaves text as is.
	Redact func(string) string
	// Progress receives one line when a task starts and one when it ends.
	Progress func(line string)
	// Bar adds an overall progress bar to Progress after each finished task (for a terminal).
	Bar bool
	// OnStep, when set, receives each step of each task's attempts.
	OnStep func(instanceID string, k int, s leaf.Step)
}

// Summary is what Run did.
type Summary struct {
	Records []Record // every task's, finished in this run or kept from an earlier one, in file order
	Kept    int      // records kept from an earlier run in Out
	Ran     int      // tasks run now
	Stopped bool     // the context was cancelled: some tasks did not run
}

// Check returns the tasks that opt lets run, and a *LineError for each it refuses, with the
// task's line and id and a *FieldError naming the field: an image that is not one of the
// runner's base images or Options.Allow.Images; a repo_path that is absolute, holds `..`, or
// resolves (through links, a .git file, alternates) outside TaskDir and Repos; a repo_url
// over http:// or git:// without Allow.PlainURLs, or whose host is or resolves to a
// loopback, link-local, metadata or unspecified address without Allow.LocalAddresses. It
// resolves folders and host names now, on this machine; Run checks each task again when it
// uses it.
func Check(ctx context.Context, tasks []Task, opt Options) (ok []Task, refused []*LineError) {
	if opt.Runner == nil {
		return nil, []*LineError{{Err: errors.New("eval: Options.Runner is required")}}
	}
	return newPolicy(opt.Runner.BaseImages(), opt).filter(ctx, tasks)
}

func (p *policy) filter(ctx context.Context, tasks []Task) (ok []Task, refused []*LineError) {
	for _, t := range tasks {
		if err := p.check(ctx, t); err != nil {
			id := ""
			if validID(t.InstanceID) {
				id = t.InstanceID
			}
			refused = append(refused, &LineError{Line: t.Line, ID: id, Err: err})
			continue
		}
		ok = append(ok, t)
	}
	return ok, refused
}

// Run evaluates tasks and writes Out: a folder per task (result.json, and the run's
// trajectory, patch and report), then predictions.jsonl, results.jsonl and report.md, which
// are rewritten after every finished task so that an interrupted evaluation keeps what
// finished. A task whose folder holds a final result for the same task line is kept, unless
// Options.Rerun. Tasks Check refuses are not run (nothing of them is used) and are reported
// through Progress and, with badLines, in report.md. Every sandbox is removed before Run
// returns, also when ctx is cancelled.
func Run(ctx context.Context, tasks []Task, badLines []*LineError, opt Options) (*Summary, error) {
	if opt.Runner == nil || opt.Out == "" {
		return nil, errors.New("eval: Options.Runner and Options.Out are required")
	}
	if opt.Redact == nil {
		opt.Redact = func(s string) string { return s }
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output folder: %w", err)
	}
	pol := newPolicy(opt.Runner.BaseImages(), opt)
	tasks, refused := pol.filter(ctx, tasks)
	for _, e := range refused {
		if opt.Progress != nil {
			opt.Progress("refused " + visible(e.Error()))
		}
	}
	badLines = append(slices.Clone(badLines), refused...)
	w := &writer{opt: opt, tasks: tasks, bad: badLines, records: make([]*Record, len(tasks))}
	src := &sources{policy: pol, cache: filepath.Join(opt.Out, ".repos")}
	sum := &Summary{}
	var todo []int
	for i, t := range tasks {
		if !opt.Rerun {
			if rec, ok := loadRecord(filepath.Join(opt.Out, Folder(t.InstanceID)), t); ok {
				w.records[i] = rec
				sum.Kept++
				continue
			}
		}
		todo = append(todo, i)
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	jobs := max(opt.Jobs, 1)
	queue := make(chan int)
	var wg sync.WaitGroup
	var done, failed int
	var mu sync.Mutex
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				t := tasks[i]
				w.progress(fmt.Sprintf("start  %s", visible(t.InstanceID)))
				rec := runTask(ctx, src, t, opt)
				if rec == nil { // cancelled: nothing kept
					continue
				}
				mu.Lock()
				done++
				n := done
				mu.Unlock()
				if err := w.finish(i, rec); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					w.progress(fmt.Sprintf("%s: writing its results: %v", visible(t.InstanceID), err))
				}
				w.progress(fmt.Sprintf("[%d/%d] %s", n, len(todo), rec.line()))
				if opt.Bar {
					w.progress(w.bar())
				}
			}
		}()
	}
feed:
	for _, i := range todo {
		select {
		case queue <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	sum.Ran = done
	sum.Stopped = ctx.Err() != nil
	if err := w.flush(); err != nil {
		return nil, err
	}
	for _, r := range w.records {
		if r != nil {
			sum.Records = append(sum.Records, *r)
		}
	}
	if failed > 0 {
		return sum, fmt.Errorf("%d task(s) could not be written to %s", failed, opt.Out)
	}
	return sum, nil
}

// runTask runs one task and scores it. It returns nil when ctx was cancelled before the task
// finished: nothing of it is kept, and a resumed evaluation runs it again.
func runTask(ctx context.Context, src *sources, t Task, opt Options) *Record {
	start := time.Now()
	rec := &Record{InstanceID: t.InstanceID, TaskHash: t.Hash(), Line: t.Line, Model: opt.Model}
	folder := filepath.Join(opt.Out, Folder(t.InstanceID))
	fail := func(final bool, format string, args ...any) *Record {
		if ctx.Err() != nil {
			return nil
		}
		rec.Status, rec.Final = StatusError, final
		rec.Error = opt.Redact(fmt.Sprintf(format, args...))
		rec.WallSeconds = time.Since(start).Seconds()
		return rec
	}
	if err := os.RemoveAll(folder); err != nil {
		return fail(false, "clearing the task's folder: %v", err)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fail(false, "creating the task's folder: %v", err)
	}
	repo, err := src.source(ctx, t)
	if err != nil {
		return fail(false, "repository: %v", err)
	}
	work, err := os.MkdirTemp("", "frognano-eval-checkout-")
	if err != nil {
		return fail(false, "creating a checkout folder: %v", err)
	}
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "repo")
	if err := checkout(ctx, repo, t.BaseCommit, dir); err != nil {
		return fail(false, "%v", err)
	}
	spec := runner.Spec{
		RunID:      "eval-" + Folder(t.InstanceID) + fmt.Sprintf("-%d", start.UnixNano()),
		InstanceID: t.InstanceID, RepoDir: dir, Task: t.ProblemStatement, Repo: t.Repo, Image: t.Image,
		// The tasks of one repository share its environments, as one checkout's runs do.
		Scope: env.Scope{Tenant: "local", Repo: "eval of " + repo},
	}
	var onStep func(int, leaf.Step)
	if opt.OnStep != nil {
		onStep = func(k int, s leaf.Step) { opt.OnStep(t.InstanceID, k, s) }
	}
	res, err := opt.Runner.RunAll(ctx, spec, onStep)
	if err != nil {
		return fail(!fault.IsTransient(err) && !isSetup(err), "the run could not be carried out: %v", err)
	}
	if res.Cancelled || ctx.Err() != nil {
		return nil
	}
	rec.fromRun(res)
	if opt.WriteRun != nil {
		if err := opt.WriteRun(folder, res); err != nil {
			return fail(false, "writing the run: %v", err)
		}
	}
	if res.SetupFailed != "" {
		return fail(true, "the repository's setup failed: %s", res.SetupFailed)
	}
	model := res.PatchBytes()
	rec.ModelPatch = string(model)
	combined, err := combine(ctx, dir, res.BaseCommit, model, []byte(t.TestPatch))
	if err != nil {
		return fail(errors.Is(err, errTestPatch), "%v", err)
	}
	tspec := spec
	tspec.RunID += "-tests"
	tr, err := opt.Runner.TestsWith(ctx, tspec, t.TestCmd, combined)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fail(false, "the task's tests could not be run: %v", err)
	}
	rec.TestsSeconds += tr.Duration.Seconds()
	rec.TestCommand = tr.Command
	writeTestsOutput(folder, tr, opt.Redact)
	if tr.Error != "" {
		return fail(false, "the task's tests could not be run: %s", tr.Error)
	}
	var score Score
	if tr.Tests != nil {
		score = ScoreTests(tr.Tests, t.FailToPass, t.PassToPass)
	}
	if (tr.Tests == nil || len(score.Missing) > 0) && len(model) > 0 {
		// Unreadable results or missing ids are the task's error only when the test patch
		// alone gives them too; otherwise the model's patch hid the tests (a conftest.py that
		// ends pytest, a deleted test), which is its failure, never an error left out of the rate.
		hid, err := hiddenByModel(ctx, opt.Runner, tspec, dir, res.BaseCommit, t)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fail(false, "the task's tests could not be run without the model's patch: %v", err)
		}
		if hid {
			if tr.Tests == nil {
				score = ScoreTests(nil, t.FailToPass, t.PassToPass)
			}
			rec.Tests = &score
			rec.Status, rec.Final = StatusUnresolved, true
			rec.Error = "the model's patch hid the task's tests: with the test patch alone they run and every id is found"
			rec.WallSeconds = time.Since(start).Seconds()
			return rec
		}
	}
	if tr.Tests == nil {
		return fail(true, "the results of %q cannot be read per test (frognano reads go test, pytest and python -m unittest); give a test_cmd it reads", tr.Command)
	}
	rec.Tests = &score
	rec.WallSeconds = time.Since(start).Seconds()
	rec.Final = true
	switch {
	case len(score.Missing) > 0:
		rec.Status = StatusError
		rec.Error = opt.Redact(fmt.Sprintf("%d test id(s) not found in the results: %s", len(score.Missing), clipList(score.Missing, 5)))
	case score.Resolved():
		rec.Status, rec.Resolved = StatusResolved, true
	default:
		rec.Status = StatusUnresolved
	}
	if tr.TimedOut && rec.Status != StatusResolved {
		rec.Error = "the task's tests timed out"
	}
	return rec
}

// hiddenByModel runs the task's tests with its test patch alone and reports whether their
// results are read per test there and hold every id.
func hiddenByModel(ctx context.Context, r *runner.Runner, spec runner.Spec, dir, base string, t Task) (bool, error) {
	alone, err := combine(ctx, dir, base, nil, []byte(t.TestPatch))
	if err != nil {
		return false, err
	}
	spec.RunID += "-alone"
	tr, err := r.TestsWith(ctx, spec, t.TestCmd, alone)
	if err != nil {
		return false, err
	}
	if tr.Error != "" || tr.Tests == nil {
		return false, nil
	}
	return len(ScoreTests(tr.Tests, t.FailToPass, t.PassToPass).Missing) == 0, nil
}

func isSetup(err error) bool {
	var se *runner.SetupError
	return errors.As(err, &se)
}

func clipList(ids []string, n int) string {
	if len(ids) > n {
		return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
	}
	return strings.Join(ids, ", ")
}

func writeTestsOutput(folder string, tr *runner.TestRun, redact func(string) string) {
	text := fmt.Sprintf("$ %s\nexit %d in %s\n\n%s\n", tr.Command, tr.ExitCode, tr.Duration.Round(time.Millisecond), tr.Tail)
	_ = os.WriteFile(filepath.Join(folder, "tests.txt"), []byte(redact(text)), 0o644)
}

// loadRecord returns the final record an earlier evaluation left for t in folder.
func loadRecord(folder string, t Task) (*Record, bool) {
	b, err := os.ReadFile(filepath.Join(folder, "result.json"))
	if err != nil {
		return nil, false
	}
	var rec Record
	if json.Unmarshal(b, &rec) != nil || !rec.Final || rec.InstanceID != t.InstanceID || rec.TaskHash != t.Hash() {
		return nil, false
	}
	rec.Line = t.Line
	return &rec, true
}
