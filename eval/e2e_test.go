package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/eval"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// suite is the end-to-end evaluation's tasks: on pyaverage one fixed, one half-fixed, one whose
// fix breaks a PASS_TO_PASS test, one whose test ids do not exist, and one whose model hides the
// tests (a conftest.py that ends pytest); on gomax one fixed; and a malformed line.
type suite struct {
	file    string
	servers map[string]*leaftest.Server
	// The repositories: pyaverage beside the task file (repo_path read from its folder),
	// gomax in another folder given as --repos; and what the evaluation runs with.
	py, gomax string
	opt       eval.Options
}

func newSuite(t *testing.T) suite {
	t.Helper()
	py, pyCommit, pyPatch := pyTaskRepo(t)
	gomax, goCommit, goPatch := taskRepo(t, "gomax", map[string]string{"max_test.go": goBase})
	f2p := []string{"tests/test_basic.py::test_average", "tests/test_basic.py::test_average_single"}
	// PASS_TO_PASS in both spellings: a pytest node id and the reader's key.
	p2p := []string{"tests/test_basic.py::test_total", "tests.test_basic.test_average_empty"}
	task := func(id, problem string) map[string]any {
		return map[string]any{"instance_id": id, "repo": "frognano/pyaverage", "repo_path": filepath.Base(py), "base_commit": pyCommit,
			"problem_statement": problem, "test_patch": pyPatch, "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p,
			"created_at": "2026-01-01", "version": "1.0"} // fields of SWE-bench's that eval does not use
	}
	noIDs := task("pyaverage-4-noids", "Please look at the median, it is off.")
	noIDs["FAIL_TO_PASS"] = []string{"tests/test_basic.py::test_median"}
	// SWE-bench's published files hold the lists as strings of JSON.
	goTask := map[string]any{"instance_id": "gomax-1-fixed", "repo_path": filepath.Base(gomax), "base_commit": goCommit,
		"problem_statement": "Max is wrong for negative numbers.", "test_patch": goPatch,
		"FAIL_TO_PASS": `["example.com/gomax/TestMaxNegative"]`, "PASS_TO_PASS": `["example.com/gomax.TestMaxPositive", "example.com/gomax/TestMin"]`,
		"image": goImage}
	lines := []string{
		jsonLine(t, task("pyaverage-1-fixed", "average() divides by one too few.")),
		jsonLine(t, task("pyaverage-2-half", "average of a single number divides by zero.")),
		`{"instance_id": "broken-line", "base_commit": `,
		jsonLine(t, task("pyaverage-3-breaks", "The arithmetic mean is wrong.")),
		"",
		jsonLine(t, noIDs),
		jsonLine(t, goTask),
		jsonLine(t, task("pyaverage-5-sabotage", "Check the rounding of average.")),
	}
	file := filepath.Join(filepath.Dir(py), "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The Go task's image is not the runner's sandbox image: the operator allows it.
	opt := eval.Options{TaskDir: filepath.Dir(file), Repos: filepath.Dir(gomax), Allow: eval.Allow{Images: []string{goImage}}}
	return suite{file: file, py: py, gomax: gomax, opt: opt, servers: map[string]*leaftest.Server{
		"divides by one too few":   leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fixed.json")),
		"single number":            leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-half.json")),
		"arithmetic mean is wrong": leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-breaks.json")),
		"median":                   leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")),
		"negative numbers":         leaftest.NewServer(t, leaftest.LoadModel(t, "eval-gomax-fixed.json")),
		"rounding of average":      leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-sabotage.json")),
	}}
}

// with is o with the suite's folders and allowances.
func (s suite) with(o eval.Options) eval.Options {
	o.TaskDir, o.Repos, o.Allow = s.opt.TaskDir, s.opt.Repos, s.opt.Allow
	return o
}

func readTasks(t *testing.T, file string) ([]eval.Task, []*eval.LineError) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tasks, bad, err := eval.ParseTasks(f)
	if err != nil {
		t.Fatal(err)
	}
	return tasks, bad
}

type progress struct {
	mu    sync.Mutex
	lines []string
}

func (p *progress) add(l string) { p.mu.Lock(); p.lines = append(p.lines, l); p.mu.Unlock() }
func (p *progress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

func writeRun(dir string, res *runner.Result) error {
	traj, err := json.Marshal(res.Trajectory())
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"patch.diff": res.PatchBytes(), "trajectory.json": traj, "report.md": []byte(report.Markdown(res))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readRecords(t *testing.T, out string) map[string]eval.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]eval.Record{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r eval.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("results.jsonl line %q: %v", l, err)
		}
		recs[r.InstanceID] = r
	}
	return recs
}

// TestEvalEndToEnd runs the suite on real Docker with scripted models, three tasks at once
// within four sandboxes, then resumes it, then compares it with an evaluation of a weaker model.
func TestEvalEndToEnd(t *testing.T) {
	t.Parallel()
	s := newSuite(t)
	router := newModelRouter(t, s.servers)
	// Its own owner: another suite on the same engine (a full run beside this one) makes its own.
	owner := fmt.Sprintf("eval-test-e2e-%d", time.Now().UnixNano())
	r := newRunner(t, owner, router.URL, 4)
	tasks, bad := readTasks(t, s.file)
	if len(tasks) != 6 || len(bad) != 1 || bad[0].Line != 3 {
		t.Fatalf("parsed %d tasks and %v, want 6 and line 3 malformed", len(tasks), bad)
	}
	out := filepath.Join(t.TempDir(), "out")
	var prog progress
	sum, err := eval.Run(context.Background(), tasks, bad, s.with(eval.Options{Runner: r, Out: out, Jobs: 3, Model: "frognano-4b-test", WriteRun: writeRun, Progress: prog.add, Bar: true}))
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, prog.String())
	}
	if sum.Ran != 6 || sum.Kept != 0 || sum.Stopped {
		t.Errorf("summary %+v, want 6 run", sum)
	}
	recs := readRecords(t, out)
	want := map[string]string{
		"pyaverage-1-fixed": eval.StatusResolved, "pyaverage-2-half": eval.StatusUnresolved, "pyaverage-3-breaks": eval.StatusUnresolved,
		"pyaverage-4-noids": eval.StatusError, "gomax-1-fixed": eval.StatusResolved,
		// Its failure is not turned into an error left out of the rate.
		"pyaverage-5-sabotage": eval.StatusUnresolved,
	}
	for id, status := range want {
		if got := recs[id]; got.Status != status || !got.Final {
			t.Errorf("%s: status %q (final %v, error %q), want %q\n%s", id, got.Status, got.Final, got.Error, status, prog.String())
		}
	}
	outcome := func(id, group, test string) string {
		r := recs[id]
		if r.Tests == nil {
			return "no tests"
		}
		if group == "F" {
			return r.Tests.FailToPass[test]
		}
		return r.Tests.PassToPass[test]
	}
	for _, c := range []struct{ id, group, test, want string }{
		{"pyaverage-1-fixed", "F", "tests/test_basic.py::test_average", "pass"},
		{"pyaverage-1-fixed", "P", "tests.test_basic.test_average_empty", "pass"},
		{"pyaverage-2-half", "F", "tests/test_basic.py::test_average", "fail"},
		{"pyaverage-2-half", "F", "tests/test_basic.py::test_average_single", "pass"},
		{"pyaverage-2-half", "P", "tests/test_basic.py::test_total", "pass"},
		{"pyaverage-3-breaks", "F", "tests/test_basic.py::test_average", "pass"},
		{"pyaverage-3-breaks", "F", "tests/test_basic.py::test_average_single", "pass"},
		{"pyaverage-3-breaks", "P", "tests/test_basic.py::test_total", "fail"},
		{"pyaverage-4-noids", "F", "tests/test_basic.py::test_median", "missing"},
		{"gomax-1-fixed", "F", "example.com/gomax/TestMaxNegative", "pass"},
		{"gomax-1-fixed", "P", "example.com/gomax.TestMaxPositive", "pass"},
	} {
		if got := outcome(c.id, c.group, c.test); got != c.want {
			t.Errorf("%s: %s is %q, want %q", c.id, c.test, got, c.want)
		}
	}
	if e := recs["pyaverage-5-sabotage"].Error; !strings.Contains(e, "the model's patch hid the task's tests") {
		t.Errorf("the sabotage's note %q", e)
	}
	if e := recs["pyaverage-4-noids"].Error; !strings.Contains(e, "not found") || !strings.Contains(e, "test_median") {
		t.Errorf("the unknown id's error %q", e)
	}
	if r := recs["pyaverage-1-fixed"]; r.Steps != 3 || r.PromptTokens != 3500 || r.ExitReason != "agent" || r.PatchBytes == 0 || r.TestsSeconds <= 0 || r.ModelSeconds <= 0 {
		t.Errorf("the fixed task's facts: %+v", r)
	}
	// The hidden tests never reached the model: no request of any task carries their marker.
	for key, srv := range s.servers {
		for _, req := range srv.Requests() {
			for _, m := range req.Messages {
				if strings.Contains(m.Text(), "hidden-eval-marker") || strings.Contains(m.Text(), "test_average_single") {
					t.Errorf("the model of %q saw the hidden tests: %.200q", key, m.Text())
				}
			}
		}
	}

	// predictions.jsonl is SWE-bench's predictions format.
	preds, err := os.ReadFile(filepath.Join(out, "predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, l := range strings.Split(strings.TrimSpace(string(preds)), "\n") {
		var p map[string]string
		if err := json.Unmarshal([]byte(l), &p); err != nil || len(p) != 3 || p["model_name_or_path"] != "frognano-4b-test" {
			t.Errorf("prediction %q: %v", l, err)
		}
		if p["instance_id"] == "pyaverage-1-fixed" && !strings.Contains(p["model_patch"], "+    return total(xs) / len(xs)") {
			t.Errorf("the fixed task's model_patch: %q", p["model_patch"])
		}
		if strings.Contains(p["model_patch"], "hidden-eval-marker") {
			t.Errorf("a model_patch holds the test patch: %q", p["model_patch"])
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d predictions, want 6", n)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"2 of 5 resolved: 40.0% (95% interval 11.8% to 76.9%)", "Errors, counted apart (not in the rate): 1", "line 3:", "| `pyaverage-2-half` | unresolved | 1/2 | 2/2 |", "| `pyaverage-3-breaks` | unresolved | 2/2 | 1/2 |"} {
		if !strings.Contains(string(report), w) {
			t.Errorf("report.md lacks %q:\n%s", w, report)
		}
	}
	for _, f := range []string{"result.json", "trajectory.json", "patch.diff", "report.md", "tests.txt"} {
		if _, err := os.Stat(filepath.Join(out, "pyaverage-1-fixed", f)); err != nil {
			t.Errorf("the task's folder: %v", err)
		}
	}
	if !strings.Contains(prog.String(), "[6/6]") || !strings.Contains(prog.String(), "[##############################] 6/6 tasks, 2 resolved, 3 unresolved, 1 errors") || !strings.Contains(prog.String(), "pyaverage-2-half: unresolved (FAIL_TO_PASS 1/2, PASS_TO_PASS 2/2)") {
		t.Errorf("progress lines:\n%s", prog.String())
	}
	if ids := containersOwnedBy(t, owner); len(ids) != 0 {
		t.Errorf("sandboxes left behind: %v", ids)
	}
	for _, dir := range []string{s.py, s.gomax} {
		if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
			t.Errorf("the task's repository %s was modified: %s", dir, st)
		}
	}

	t.Run("Resume", func(t *testing.T) {
		// Every task finished: a second run on the same folder runs nothing (the router's
		// scripts are used up, so any model call would fail the test) and keeps the results.
		again, err := eval.Run(context.Background(), tasks, bad, s.with(eval.Options{Runner: r, Out: out, Jobs: 3, Model: "frognano-4b-test", WriteRun: writeRun}))
		if err != nil {
			t.Fatal(err)
		}
		if again.Ran != 0 || again.Kept != 6 {
			t.Errorf("resumed: ran %d, kept %d; want 0 and 6", again.Ran, again.Kept)
		}
		if got := readRecords(t, out); len(got) != 6 || got["pyaverage-1-fixed"].Status != eval.StatusResolved {
			t.Errorf("results after resuming: %v", got)
		}
		// A task whose line changed is not the task that finished: it runs again.
		changed := append([]eval.Task{}, tasks...)
		changed[0].ProblemStatement += " (the fix is one line)"
		srv := leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fixed.json"))
		router.mu.Lock()
		router.servers = map[string]*leaftest.Server{"divides by one too few": srv}
		router.mu.Unlock()
		third, err := eval.Run(context.Background(), changed, bad, s.with(eval.Options{Runner: r, Out: out, Jobs: 3, Model: "frognano-4b-test", WriteRun: writeRun}))
		if err != nil {
			t.Fatal(err)
		}
		if third.Ran != 1 || third.Kept != 5 || len(srv.Requests()) != 3 {
			t.Errorf("changed line: ran %d, kept %d, %d model requests; want 1, 5, 3", third.Ran, third.Kept, len(srv.Requests()))
		}
	})

	t.Run("Compare", func(t *testing.T) {
		// A second real evaluation with other models: the fixed task's model now changes
		// nothing, the half-fixed task's now fixes it, the rest as before.
		router.mu.Lock()
		router.servers = map[string]*leaftest.Server{
			"divides by one too few":   leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")),
			"single number":            leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fix-any.json")),
			"arithmetic mean is wrong": leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-breaks.json")),
			"median":                   leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")),
			"negative numbers":         leaftest.NewServer(t, leaftest.LoadModel(t, "eval-gomax-fixed.json")),
			"rounding of average":      leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-sabotage.json")),
		}
		router.mu.Unlock()
		other := filepath.Join(t.TempDir(), "other")
		if _, err := eval.Run(context.Background(), tasks, bad, s.with(eval.Options{Runner: r, Out: other, Jobs: 3})); err != nil {
			t.Fatal(err)
		}
		c, err := eval.CompareDirs(out, other)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(c.OnlyA, ",") != "pyaverage-1-fixed" || strings.Join(c.OnlyB, ",") != "pyaverage-2-half" || c.Both != 1 || c.Neither != 2 ||
			strings.Join(c.Unpaired, ",") != "pyaverage-4-noids" || c.P != 1 {
			t.Errorf("comparison %+v", c)
		}
		text := c.String()
		for _, w := range []string{"resolved by A only (1): pyaverage-1-fixed", "resolved by B only (1): pyaverage-2-half", "p = 1.000", "not significant"} {
			if !strings.Contains(text, w) {
				t.Errorf("comparison text lacks %q:\n%s", w, text)
			}
		}
		if ids := containersOwnedBy(t, owner); len(ids) != 0 {
			t.Errorf("sandboxes left behind: %v", ids)
		}
	})
}

// TestEvalAttempts: --attempts N is honoured as a run honours it: two attempts, one that fixes
// the task and one that changes nothing; frognano's own tests choose the fix, and the task's
// tokens are both attempts'.
func TestEvalAttempts(t *testing.T) {
	t.Parallel()
	dir, commit, patch := pyTaskRepo(t)
	router := leaftest.NewRouter(t, nil,
		leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fixed.json")),
		leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")))
	owner := fmt.Sprintf("eval-test-attempts-%d", time.Now().UnixNano())
	task := eval.Task{InstanceID: "attempts", RepoPath: filepath.Base(dir), BaseCommit: commit, ProblemStatement: "average() divides by one too few.", TestPatch: patch,
		FailToPass: []string{"tests/test_basic.py::test_average"}, PassToPass: []string{"tests/test_basic.py::test_total"}}
	sum, err := eval.Run(context.Background(), []eval.Task{task}, nil, eval.Options{Runner: newRunnerWith(t, owner, router.URL, 4, 2), Out: t.TempDir(), TaskDir: filepath.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	rec := sum.Records[0]
	if rec.Status != eval.StatusResolved || rec.PromptTokens != 3500+900 || rec.Steps != 3 {
		t.Errorf("record %+v, want resolved by the fixing attempt with both attempts' 4400 prompt tokens", rec)
	}
	if ids := containersOwnedBy(t, owner); len(ids) != 0 {
		t.Errorf("sandboxes left behind: %v", ids)
	}
}
