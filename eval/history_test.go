package eval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/eval"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

const histCode = `def total(xs):
    return sum(xs)


def average(xs):
    return total(xs) / (len(xs) - 1)


def maximum(xs):
    return sorted(xs)[0]
`

const histTests = `from stats import total


def test_total():
    assert total([1, 2, 3]) == 6
`

// historyRepo is a repository with, after its first commit: a fix of average with its tests,
// a commit that changes code and tests whose new test passes without the code change (it does
// not qualify), a README change, and a fix of maximum with its test.
func historyRepo(t *testing.T) (dir string, fixes []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "histrepo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, map[string]string{"stats.py": histCode, "tests/test_stats.py": histTests, "pytest.ini": "[pytest]\npythonpath = .\n"})
	gittest.Commit(t, dir, "initial")
	code := strings.Replace(histCode, "(len(xs) - 1)", "len(xs)", 1)
	tests := histTests + "\n\ndef test_average():\n    from stats import average\n    assert average([2, 4, 6]) == 4\n"
	gittest.Write(t, dir, map[string]string{"stats.py": code, "tests/test_stats.py": tests})
	fixes = append(fixes, gittest.Commit(t, dir, "average divides by one too few\n\naverage([2, 4, 6]) returned 6."))
	// Code and tests change, but the new test passes on the parent as well: a refactor, not a fix.
	code = strings.Replace(code, "return sum(xs)", "result = 0\n    for x in xs:\n        result += x\n    return result", 1)
	tests += "\n\ndef test_total_empty():\n    assert total([]) == 0\n"
	gittest.Write(t, dir, map[string]string{"stats.py": code, "tests/test_stats.py": tests})
	gittest.Commit(t, dir, "total: a plain loop")
	gittest.Write(t, dir, map[string]string{"README.md": "stats\n"})
	gittest.Commit(t, dir, "readme")
	code = strings.Replace(code, "sorted(xs)[0]", "sorted(xs)[-1]", 1)
	tests += "\n\ndef test_maximum():\n    from stats import maximum\n    assert maximum([3, 9, 4]) == 9\n"
	gittest.Write(t, dir, map[string]string{"stats.py": code, "tests/test_stats.py": tests})
	fixes = append(fixes, gittest.Commit(t, dir, "maximum returned the minimum"))
	return dir, fixes
}

// TestMineHistory mines a repository made for the test (two fix commits, one commit that
// changes code and tests but does not qualify, one that changes neither's both) on real
// Docker, then evaluates the mined tasks with a model that changes nothing: both are scored
// (unresolved), not errors, so the mined ids are ids the readers find.
func TestMineHistory(t *testing.T) {
	t.Parallel()
	repo, fixes := historyRepo(t)
	owner := fmt.Sprintf("eval-test-mine-%d", time.Now().UnixNano())
	model := leaftest.NewServer(t, leaftest.Script{Turns: nil, AllowUnused: true})
	r := newRunner(t, owner, model.URL, 4)
	var prog progress
	// The task file goes beside the clone: repo_path is the clone's folder name, read from there.
	taskDir := filepath.Dir(repo)
	tasks, skipped, err := eval.Mine(context.Background(), eval.MineOptions{Runner: r, Repo: repo, TaskDir: taskDir, Name: "acme/stats", Progress: prog.add})
	if err != nil {
		t.Fatalf("Mine: %v\n%s", err, prog.String())
	}
	if len(tasks) != 2 || len(skipped) != 3 {
		t.Fatalf("%d tasks and skipped %+v, want 2 and 3\n%s", len(tasks), skipped, prog.String())
	}
	// Newest first: maximum's fix, then average's.
	want := []struct {
		commit   string
		f2p, p2p []string
		message  string
	}{
		{fixes[1], []string{"tests.test_stats.test_maximum"}, []string{"tests.test_stats.test_average", "tests.test_stats.test_total", "tests.test_stats.test_total_empty"}, "maximum returned the minimum"},
		{fixes[0], []string{"tests.test_stats.test_average"}, []string{"tests.test_stats.test_total"}, "average divides by one too few\n\naverage([2, 4, 6]) returned 6."},
	}
	for i, w := range want {
		got := tasks[i]
		parent := gittest.Git(t, repo, "rev-parse", w.commit+"^")
		if got.BaseCommit != parent || strings.Join(got.FailToPass, ",") != strings.Join(w.f2p, ",") || strings.Join(got.PassToPass, ",") != strings.Join(w.p2p, ",") ||
			got.ProblemStatement != w.message || got.Repo != "acme/stats" || got.RepoPath != "histrepo" {
			t.Errorf("task %d: %+v", i, got)
		}
		if !strings.Contains(got.TestPatch, "tests/test_stats.py") || strings.Contains(got.TestPatch, "stats.py b/stats.py") {
			t.Errorf("task %d's test patch is not the tests alone:\n%s", i, got.TestPatch)
		}
		if !strings.Contains(got.ReferencePatch, "b/stats.py") || strings.Contains(got.ReferencePatch, "tests/") {
			t.Errorf("task %d's reference fix is not the code alone:\n%s", i, got.ReferencePatch)
		}
	}
	whys := map[string]bool{}
	for _, s := range skipped {
		whys[s.Why] = true
	}
	for _, w := range []string{"no test fails without its code change and passes with it", "it does not change both tests and code", "the first commit has no parent to test against"} {
		if !whys[w] {
			t.Errorf("no commit skipped because %q: %+v", w, skipped)
		}
	}
	if ids := containersOwnedBy(t, owner); len(ids) != 0 {
		t.Errorf("sandboxes left behind: %v", ids)
	}

	// The mined tasks written as a task file and read back are what eval runs.
	var lines []string
	for _, tk := range tasks {
		lines = append(lines, jsonLine(t, tk))
	}
	file := filepath.Join(taskDir, "mined.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	back, bad := readTasks(t, file)
	if len(back) != 2 || len(bad) != 0 || back[0].ReferencePatch == "" {
		t.Fatalf("the mined task file reads back as %d tasks, %v", len(back), bad)
	}
	router := newModelRouter(t, map[string]*leaftest.Server{
		"maximum returned": leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")),
		"one too few":      leaftest.NewServer(t, leaftest.LoadModel(t, "eval-finish.json")),
	})
	out := filepath.Join(t.TempDir(), "out")
	sum, err := eval.Run(context.Background(), back, nil, eval.Options{Runner: newRunner(t, owner, router.URL, 4), Out: out, Jobs: 2, TaskDir: taskDir})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range sum.Records {
		if rec.Status != eval.StatusUnresolved || rec.Tests == nil || len(rec.Tests.Missing) != 0 {
			t.Errorf("%s: %+v", rec.InstanceID, rec)
		}
	}
}

// TestMineListedCommits: listed commits are hex names only (anything else stops the mining
// before git reads it), and one the clone lacks is skipped, saying so, before any sandbox.
func TestMineListedCommits(t *testing.T) {
	t.Parallel()
	repo, _ := historyRepo(t)
	_, _, err := eval.Mine(context.Background(), eval.MineOptions{Repo: repo, Commits: []eval.Commit{{SHA: "--output=/tmp/x"}}})
	if err == nil || !strings.Contains(err.Error(), "is not a commit's hex name") {
		t.Errorf("a listed option: %v", err)
	}
	tasks, skipped, err := eval.Mine(context.Background(), eval.MineOptions{Repo: repo, Commits: []eval.Commit{{SHA: "deadbeef00"}}})
	if err != nil || len(tasks) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Why, "the clone has no such commit") {
		t.Errorf("a missing commit: %v, %v, %+v", err, tasks, skipped)
	}
}
