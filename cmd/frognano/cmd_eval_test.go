package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// evalTaskFile writes a task file of n tasks on pyaverage (the same task under ids t1..tn),
// whose base commit lacks the tests the fix makes pass, and a malformed last line.
func evalTaskFile(t *testing.T, n int) string {
	t.Helper()
	repo := cliCheckout(t, "pyaverage")
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	full, err := os.ReadFile(filepath.Join(repo, "tests", "test_basic.py"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(string(full), "def test_average():\n    assert average([2, 4, 6]) == 4\n\n\n", "", 1)
	if err := os.WriteFile(filepath.Join(repo, "tests", "test_basic.py"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "base")
	commit := strings.TrimSpace(git("rev-parse", "HEAD"))
	if err := os.WriteFile(filepath.Join(repo, "tests", "test_basic.py"), full, 0o644); err != nil {
		t.Fatal(err)
	}
	testPatch := git("diff")
	git("checkout", "--", ".")
	var lines []string
	for i := 1; i <= n; i++ {
		b, _ := json.Marshal(map[string]any{"instance_id": fmt.Sprintf("t%d", i), "repo_path": filepath.Base(repo), "base_commit": commit,
			"problem_statement": "average() divides by one too few.", "test_patch": testPatch,
			"FAIL_TO_PASS": []string{"tests/test_basic.py::test_average"}, "PASS_TO_PASS": []string{"tests/test_basic.py::test_total"}})
		lines = append(lines, string(b))
	}
	lines = append(lines, `["not", "a", "task"]`)
	// A task that names an image nobody allowed: refused, the others run.
	b, _ := json.Marshal(map[string]any{"instance_id": "bad-image", "image": "cryptominer/xmrig:latest", "repo_path": filepath.Base(repo), "base_commit": commit,
		"problem_statement": "p", "test_patch": testPatch, "FAIL_TO_PASS": []string{"x"}})
	lines = append(lines, string(b))
	// Beside the clone: repo_path is read from the task file's folder.
	file := filepath.Join(filepath.Dir(repo), "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestEvalCommand drives `frognano eval` as a user would: progress and the rate on stderr,
// the run's files per task as `frognano run` writes them, a resumed run that keeps the task,
// and `eval compare`.
func TestEvalCommand(t *testing.T) {
	t.Parallel()
	model := leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fixed.json"))
	file := evalTaskFile(t, 1)
	out := filepath.Join(t.TempDir(), "out")
	env := envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1",
		"FROGNANO_SANDBOX_OWNER": fmt.Sprintf("eval-cmd-%d", time.Now().UnixNano())})
	args := []string{"eval", "--tasks", file, "--out", out, "--executor", cliExecutor(t)}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, env, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	for _, w := range []string{"tasks.jsonl: line 2: not a JSON object", `tasks.jsonl: line 3, task "bad-image": image: "cryptominer/xmrig:latest" is not a sandbox image`,
		"t1 | step   1/100  Read stats/basic.py", "start  t1",
		"[1/1] t1: resolved (FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1), 3 steps", "1 of 1 resolved: 100.0% (95% interval 20.7% to 100.0%); errors (counted apart): 0"} {
		if !strings.Contains(log, w) {
			t.Errorf("stderr lacks %q:\n%s", w, log)
		}
	}
	traj, err := os.ReadFile(filepath.Join(out, "t1", "trajectory.json"))
	if err != nil || !bytes.Contains(traj, []byte(`"trajectory_format": "leaf-function-calling"`)) {
		t.Errorf("t1/trajectory.json: %v\n%.300s", err, traj)
	}
	if report, err := os.ReadFile(filepath.Join(out, "t1", "report.md")); err != nil || !strings.Contains(string(report), "Exit reason: `agent`") {
		t.Errorf("t1/report.md: %v", err)
	}
	if report, err := os.ReadFile(filepath.Join(out, "report.md")); err != nil || !strings.Contains(string(report), "- line 3, task `bad-image`: `image: ") {
		t.Errorf("report.md does not list the refused task: %v\n%s", err, report)
	}
	if _, err := os.Stat(filepath.Join(out, "bad-image")); !os.IsNotExist(err) {
		t.Errorf("the refused task has a folder: %v", err)
	}

	stderr.Reset()
	if err := run(context.Background(), args, env, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "kept from before: 1") {
		t.Errorf("resumed eval: %v\n%s", err, stderr.String())
	}

	stdout.Reset()
	if err := run(context.Background(), []string{"eval", "compare", out, out}, env, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "verdict: no task flipped") {
		t.Errorf("compare:\n%s", stdout.String())
	}
	for _, bad := range [][]string{{"eval", "compare", out}, {"eval", "compare", out, t.TempDir()}, {"eval", "--out", out}, {"eval", "tasks", "--out", out}} {
		if err := run(context.Background(), bad, env, &stdout, &stderr); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", bad, exitCode(err), err)
		}
	}
}

// TestEvalCommandInterrupted: Ctrl-C while the second task's agent runs a long command stops
// the evaluation: no sandbox is left, the first task's result is kept, and the second is not
// recorded (a resumed evaluation runs it).
func TestEvalCommandInterrupted(t *testing.T) {
	t.Parallel()
	second := leaftest.NewServer(t, leaftest.LoadModel(t, "e2e-cancel-in-bash.json"))
	router := leaftest.NewRouter(t, nil, leaftest.NewServer(t, leaftest.LoadModel(t, "eval-pyaverage-fixed.json")), second)
	file := evalTaskFile(t, 2)
	out := filepath.Join(t.TempDir(), "out")
	owner := fmt.Sprintf("eval-cmd-int-%d", time.Now().UnixNano())
	env := envMap(map[string]string{"FROGNANO_MODEL_URL": router.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1", "FROGNANO_SANDBOX_OWNER": owner})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if second.WaitRequests(ctx, 1) == nil {
			cancel()
		}
	}()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"eval", "--tasks", file, "--out", out, "--jobs", "1", "--executor", cliExecutor(t)}, env, &stdout, &stderr)
	if !errors.Is(err, context.Canceled) || exitCode(err) != 130 {
		t.Fatalf("eval: %v, want cancelled\n%s", err, stderr.String())
	}
	if left := sandboxesOf(t, runOwner(owner)); len(left) != 0 {
		t.Errorf("%d sandbox(es) left after Ctrl-C", len(left))
	}
	results, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(results), `"instance_id":"t1","status":"resolved"`) || strings.Contains(string(results), `"t2"`) {
		t.Errorf("results.jsonl after Ctrl-C:\n%s", results)
	}
	if !strings.Contains(stderr.String(), "stopped; run the same command again") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestEvalTasksCommand: `frognano eval tasks --from-history` writes a task file of the fixes
// in a repository's history (one here, after a commit that does not qualify), with no model.
func TestEvalTasksCommand(t *testing.T) {
	t.Parallel()
	repo := cliCheckout(t, "pyaverage")
	git := func(args ...string) {
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "NOTES.md"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "notes")
	basic := filepath.Join(repo, "stats", "basic.py")
	code, err := os.ReadFile(basic)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(basic, bytes.Replace(code, []byte("(len(xs) - 1)"), []byte("len(xs)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(repo, "tests", "test_basic.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\n\ndef test_average_pair():\n    assert average([1, 3]) == 2\n")
	f.Close()
	git("commit", "-q", "-am", "average divides by len(xs)")
	out := filepath.Join(t.TempDir(), "mined.jsonl")
	env := envMap(map[string]string{"FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1", "FROGNANO_SANDBOX_OWNER": fmt.Sprintf("eval-tasks-%d", time.Now().UnixNano())})
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"eval", "tasks", "--from-history", repo, "--limit", "5", "--name", "acme/pyaverage", "--out", out, "--executor", cliExecutor(t)}, env, &stdout, &stderr); err != nil {
		t.Fatalf("eval tasks: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var task struct {
		ID        string   `json:"instance_id"`
		Repo      string   `json:"repo"`
		F2P       []string `json:"FAIL_TO_PASS"`
		P2P       []string `json:"PASS_TO_PASS"`
		Problem   string   `json:"problem_statement"`
		Reference string   `json:"reference_patch"`
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &task) != nil {
		t.Fatalf("task file:\n%s\nstderr:\n%s", b, stderr.String())
	}
	// Every test of the base fails on average's bug except test_total and test_average_empty;
	// with the fix, test_average, test_average_single and the new one pass.
	if strings.Join(task.F2P, ",") != "tests.test_basic.test_average,tests.test_basic.test_average_pair,tests.test_basic.test_average_single" ||
		strings.Join(task.P2P, ",") != "tests.test_basic.test_average_empty,tests.test_basic.test_total" ||
		task.Problem != "average divides by len(xs)" || task.Repo != "acme/pyaverage" || !strings.Contains(task.Reference, "stats/basic.py") {
		t.Errorf("task %+v", task)
	}
	// The clone is not beside the task file: its repo_path is its folder's name, for --repos.
	if !strings.Contains(lines[0], `"repo_path":"pyaverage"`) {
		t.Errorf("repo_path: %s", lines[0])
	}
	for _, w := range []string{"skipped: it does not change both tests and code", "task: FAIL_TO_PASS 3, PASS_TO_PASS 2", "wrote 1 task(s)",
		"the clone is not under the task file's folder: evaluate with --repos " + filepath.Dir(repo)} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}

// TestEvalCommandRefusesTasks: tasks that name an image nobody allowed, a repo_path that is
// absolute, climbs out with `..` or leaves through a link, or a repo_url over plain http, to
// a metadata address or to this machine, are each refused with the task's id and the field,
// and nothing of them is used: no request reaches the server they name, no folder of theirs
// is written, no sandbox is made. With nothing left to run the command exits 2.
func TestEvalCommandRefusesTasks(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	taskDir := t.TempDir()
	outside := cliCheckout(t, "pyaverage")
	if err := os.Symlink(outside, filepath.Join(taskDir, "link")); err != nil {
		t.Fatal(err)
	}
	commit := strings.Repeat("a", 40)
	refused := []struct{ id, field, value, why string }{
		{"image", "image", "cryptominer/xmrig:latest", "is not a sandbox image this evaluation may use"},
		{"absolute", "repo_path", outside, "is absolute"},
		{"climbs", "repo_path", "../" + filepath.Base(filepath.Dir(outside)) + "/pyaverage", "holds a `..` part"},
		{"link", "repo_path", "link", "leads out of the task file's folder and --repos"},
		{"plain", "repo_url", "http://127.0.0.1:" + port + "/acme.git", "http:// neither encrypts"},
		{"metadata", "repo_url", "https://169.254.169.254/latest/meta-data/iam.git", "a cloud metadata address"},
		{"loopback", "repo_url", "https://127.0.0.1:" + port + "/acme.git", "a loopback address"},
		{"localhost", "repo_url", "https://localhost:" + port + "/acme.git", "a loopback address"},
	}
	var lines []string
	for _, r := range refused {
		task := map[string]any{"instance_id": r.id, "base_commit": commit, "problem_statement": "p", "test_patch": "diff --git a/t b/t\n", "FAIL_TO_PASS": []string{"x"}}
		task[r.field] = r.value
		b, _ := json.Marshal(task)
		lines = append(lines, string(b))
	}
	file := filepath.Join(taskDir, "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := leaftest.NewServer(t, leaftest.Script{AllowUnused: true})
	owner := fmt.Sprintf("eval-refuse-%d", time.Now().UnixNano())
	env := envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_OWNER": owner})
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"eval", "--tasks", file, "--out", out, "--executor", cliExecutor(t)}, env, &stdout, &stderr)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "holds no task this evaluation may run") {
		t.Errorf("eval: exit %d (%v), want 2\n%s", exitCode(err), err, stderr.String())
	}
	for i, r := range refused {
		w := fmt.Sprintf("tasks.jsonl: line %d, task %q: %s: ", i+1, r.id, r.field)
		if !strings.Contains(stderr.String(), w) || !strings.Contains(stderr.String(), r.why) {
			t.Errorf("stderr lacks %q … %q:\n%s", w, r.why, stderr.String())
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server a refused task names got %d request(s)", n)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the output folder was written: %v", err)
	}
	if left := sandboxesOf(t, runOwner(owner)); len(left) != 0 {
		t.Errorf("%d sandbox(es) made", len(left))
	}
	if st, err := exec.Command("git", "-C", outside, "status", "--porcelain").Output(); err != nil || len(st) != 0 {
		t.Errorf("the clone outside: %v %s", err, st)
	}
}

// TestEvalTasksFromExport: `frognano eval tasks --from-export` makes a task of each merged pull
// request of the export's repository: the merge commit against its first parent, the issue
// the run was given as the problem statement (without the repository's instructions), an id
// naming the pull request; a pull request closed without merge, and another repository's, are
// not mined.
func TestEvalTasksFromExport(t *testing.T) {
	t.Parallel()
	repo := cliCheckout(t, "pyaverage")
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("checkout", "-q", "-b", "frognano/issue-3")
	basic := filepath.Join(repo, "stats", "basic.py")
	code, err := os.ReadFile(basic)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(basic, bytes.Replace(code, []byte("(len(xs) - 1)"), []byte("len(xs)"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(repo, "tests", "test_basic.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\n\ndef test_average_pair():\n    assert average([1, 3]) == 2\n")
	f.Close()
	git("commit", "-q", "-am", "fix average")
	git("checkout", "-q", "-")
	git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", "frognano/issue-3")
	merge := git("rev-parse", "HEAD")
	base := git("rev-parse", "HEAD^1")

	dir := t.TempDir()
	exportFile := filepath.Join(dir, "runs.jsonl")
	record := func(task string) string {
		b, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "system", "content": "s"}, {"role": "user", "content": task}, {"role": "assistant", "content": "ok"}}, "tools": []any{}})
		return string(b)
	}
	labels := func(id int, repo string, pr int, state, sha string) string {
		return fmt.Sprintf(`{"run_id":%d,"repository":%q,"kind":"issue","issue":3,"pull_request":%d,"outcome":{"state":%q,"merge_commit":%q},"followups":[]}`, id, repo, pr, state, sha)
	}
	recs := record("average is wrong\n\naverage([1, 3]) gives 4.\n\nRepository instructions (AGENTS.md):\n\nKeep it short.\n") + "\n" +
		record("closed one") + "\n" + record("another repository") + "\n"
	labs := labels(1, "acme/pyaverage", 7, "merged", merge) + "\n" + labels(2, "acme/pyaverage", 8, "closed", "") + "\n" +
		labels(3, "acme/other", 9, "merged", base) + "\n"
	if err := os.WriteFile(exportFile, []byte(recs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exportFile+".labels.jsonl", []byte(labs), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tasks.jsonl")
	env := envMap(map[string]string{"FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1", "FROGNANO_SANDBOX_OWNER": fmt.Sprintf("eval-export-%d", time.Now().UnixNano())})
	var stdout, stderr bytes.Buffer
	// Two repositories in the export: the clone's must be named.
	err = run(context.Background(), []string{"eval", "tasks", "--from-history", repo, "--from-export", exportFile, "--out", out, "--executor", cliExecutor(t)}, env, &stdout, &stderr)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "give --name OWNER/REPO") {
		t.Fatalf("without --name: %v", err)
	}
	args := []string{"eval", "tasks", "--from-history", repo, "--from-export", exportFile, "--name", "acme/pyaverage", "--out", out, "--executor", cliExecutor(t)}
	if err := run(context.Background(), args, env, &stdout, &stderr); err != nil {
		t.Fatalf("eval tasks --from-export: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var task struct {
		ID      string   `json:"instance_id"`
		Repo    string   `json:"repo"`
		Base    string   `json:"base_commit"`
		F2P     []string `json:"FAIL_TO_PASS"`
		Problem string   `json:"problem_statement"`
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &task) != nil {
		t.Fatalf("task file:\n%s\nstderr:\n%s", b, stderr.String())
	}
	if task.ID != "acme__pyaverage-pr7" || task.Repo != "acme/pyaverage" || task.Base != base || task.Problem != "average is wrong\n\naverage([1, 3]) gives 4." ||
		strings.Join(task.F2P, ",") != "tests.test_basic.test_average,tests.test_basic.test_average_pair,tests.test_basic.test_average_single" {
		t.Errorf("task %+v", task)
	}
}
