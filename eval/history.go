package eval

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/verify"
)

// MineOptions configures Mine.
type MineOptions struct {
	Runner *runner.Runner
	Repo   string // a local clone; read, never written
	// TaskDir is the folder the task file will be written to: a task's repo_path is the
	// clone's path relative to it when the clone lies under it, else the clone's folder name
	// (read then from `frognano eval --repos` the clone's parent folder: MinedRepos).
	TaskDir string
	// Branch is the branch whose first-parent history is mined; "": the clone's HEAD.
	Branch string
	Since  string // git's --since (e.g. "2026-01-01" or "6 months ago"); "": all history
	Limit  int    // the newest Limit commits are examined; <= 0: all
	// Name is "owner/name" for the tasks' repo field; "": none.
	Name    string
	TestCmd string // the tasks' test_cmd; "": the repository's own
	Image   string // the tasks' image; "": the operator's
	// Progress receives one line per commit examined.
	Progress func(line string)
	// Commits, when set, are the commits to mine instead of the branch's history (Branch,
	// Since and Limit are then not read), in their order: the merge commits of the pull
	// requests an export labels as merged (`frognano eval tasks --from-export`).
	Commits []Commit
}

// Commit is one commit to mine, with what its task says instead of its message.
type Commit struct {
	SHA string
	// Statement is the task's problem statement; "": the commit's message.
	Statement string
	// ID is the task's instance id; "": the clone's folder name and the commit's first 12
	// hex digits.
	ID string
}

// commitSHA is a commit's full or abbreviated hex name, the only form a listed commit may take.
var commitSHA = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// Skipped is a commit Mine examined and did not make a task of, and why.
type Skipped struct {
	Commit string
	Why    string
}

// Mine makes tasks of a repository's own history: each first-parent commit on the branch that
// changes both tests and code becomes a candidate whose test changes are the test_patch and
// whose code changes are the reference fix; the candidate's tests run in the sandbox on its
// parent with the test changes alone and with the whole commit, and it is kept when some test
// fails without the code change and passes with it (FAIL_TO_PASS); the tests passing both
// ways are PASS_TO_PASS. The commit message is the problem statement. Tasks come newest first.
func Mine(ctx context.Context, opt MineOptions) ([]Task, []Skipped, error) {
	repo, err := filepath.Abs(opt.Repo)
	if err != nil {
		return nil, nil, err
	}
	if len(opt.Commits) > 0 {
		return mineList(ctx, opt, repo)
	}
	git := patch.HostGit(repo)
	args := []string{"rev-list", "--first-parent"}
	if opt.Since != "" {
		args = append(args, "--since="+opt.Since)
	}
	if opt.Limit > 0 {
		args = append(args, fmt.Sprintf("--max-count=%d", opt.Limit))
	}
	branch := opt.Branch
	if branch == "" {
		branch = "HEAD"
	}
	if strings.HasPrefix(branch, "-") {
		return nil, nil, errors.New("the branch name starts with '-'")
	}
	out, err := git(ctx, nil, nil, append(args, branch, "--")...)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the history of %s: %w", branch, err)
	}
	var tasks []Task
	var skipped []Skipped
	for _, c := range strings.Fields(string(out)) {
		if err := ctx.Err(); err != nil {
			return tasks, skipped, err
		}
		t, why, err := mineCommit(ctx, opt, repo, Commit{SHA: c})
		if err != nil {
			return tasks, skipped, err
		}
		if why != "" {
			skipped = append(skipped, Skipped{c, why})
			progress(opt.Progress, fmt.Sprintf("%.12s skipped: %s", c, why))
			continue
		}
		tasks = append(tasks, t)
		progress(opt.Progress, fmt.Sprintf("%.12s task: FAIL_TO_PASS %d, PASS_TO_PASS %d", c, len(t.FailToPass), len(t.PassToPass)))
	}
	return tasks, skipped, nil
}

// mineList is Mine of opt.Commits: each one that is not a commit of the clone is skipped,
// saying so.
func mineList(ctx context.Context, opt MineOptions, repo string) ([]Task, []Skipped, error) {
	var tasks []Task
	var skipped []Skipped
	git := patch.HostGit(repo)
	for _, c := range opt.Commits {
		if err := ctx.Err(); err != nil {
			return tasks, skipped, err
		}
		if !commitSHA.MatchString(c.SHA) {
			return tasks, skipped, fmt.Errorf("%q is not a commit's hex name", c.SHA)
		}
		full, err := git(ctx, nil, nil, "rev-parse", "--verify", "--quiet", c.SHA+"^{commit}")
		if err != nil {
			skipped = append(skipped, Skipped{c.SHA, "the clone has no such commit (fetch the pull requests' merges first)"})
			progress(opt.Progress, fmt.Sprintf("%.12s skipped: the clone has no such commit", c.SHA))
			continue
		}
		c.SHA = strings.TrimSpace(string(full))
		t, why, err := mineCommit(ctx, opt, repo, c)
		if err != nil {
			return tasks, skipped, err
		}
		if why != "" {
			skipped = append(skipped, Skipped{c.SHA, why})
			progress(opt.Progress, fmt.Sprintf("%.12s skipped: %s", c.SHA, why))
			continue
		}
		tasks = append(tasks, t)
		progress(opt.Progress, fmt.Sprintf("%.12s task: FAIL_TO_PASS %d, PASS_TO_PASS %d", c.SHA, len(t.FailToPass), len(t.PassToPass)))
	}
	return tasks, skipped, nil
}

func progress(f func(string), line string) {
	if f != nil {
		f(line)
	}
}

// mineCommit makes a task of commit cm (against its first parent), or says why not (why).
// err is a failure of the machinery that should stop the mining.
func mineCommit(ctx context.Context, opt MineOptions, repo string, cm Commit) (t Task, why string, err error) {
	c := cm.SHA
	git := patch.HostGit(repo)
	parents, err := git(ctx, nil, nil, "rev-list", "--parents", "-n", "1", c)
	if err != nil {
		return t, "", err
	}
	f := strings.Fields(string(parents))
	if len(f) < 2 {
		return t, "the first commit has no parent to test against", nil
	}
	parent := f[1]
	names, err := git(ctx, nil, nil, "diff", "--name-only", "--no-renames", "-z", parent, c)
	if err != nil {
		return t, "", err
	}
	var tests, code []string
	for _, p := range bytes.Split(names, []byte{0}) {
		switch s := string(p); {
		case s == "":
		case patch.IsTestPath(s):
			tests = append(tests, s)
		default:
			code = append(code, s)
		}
	}
	if len(tests) == 0 || len(code) == 0 {
		return t, "it does not change both tests and code", nil
	}
	diff := func(paths []string) ([]byte, error) {
		return git(ctx, []string{"GIT_LITERAL_PATHSPECS=1"}, nil, append([]string{"diff", "--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
			"--src-prefix=a/", "--dst-prefix=b/", parent, c, "--"}, paths...)...)
	}
	testPatch, err := diff(tests)
	if err != nil {
		return t, "", err
	}
	fix, err := diff(code)
	if err != nil {
		return t, "", err
	}
	whole, err := diff(append(append([]string{}, tests...), code...))
	if err != nil {
		return t, "", err
	}
	msg, err := git(ctx, nil, nil, "log", "-1", "--format=%B", c)
	if err != nil {
		return t, "", err
	}

	work, err := os.MkdirTemp("", "frognano-mine-")
	if err != nil {
		return t, "", err
	}
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "repo")
	if err := checkout(ctx, repo, parent, dir); err != nil {
		return t, "", err
	}
	spec := runner.Spec{RunID: fmt.Sprintf("mine-%.12s", c), InstanceID: c, RepoDir: dir, Repo: opt.Name, Image: opt.Image,
		Scope: env.Scope{Tenant: "local", Repo: "eval of " + repo}}
	var before, after *runner.TestRun
	var errBefore, errAfter error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s := spec
		s.RunID += "-without"
		before, errBefore = opt.Runner.TestsWith(ctx, s, opt.TestCmd, testPatch)
	}()
	go func() {
		defer wg.Done()
		s := spec
		s.RunID += "-with"
		after, errAfter = opt.Runner.TestsWith(ctx, s, opt.TestCmd, whole)
	}()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return t, "", err
	}
	for _, e := range []error{errBefore, errAfter} {
		var se *runner.SetupError
		if errors.As(e, &se) {
			return t, "", e // no image, no executor: no commit can be tested
		}
		if e != nil {
			return t, "its tests could not be run: " + e.Error(), nil
		}
	}
	for _, r := range []*runner.TestRun{before, after} {
		switch {
		case r.Error != "":
			return t, "its tests could not be run: " + r.Error, nil
		case r.Tests == nil:
			return t, fmt.Sprintf("the results of %q cannot be read per test", r.Command), nil
		}
	}
	f2p, p2p := classifyTests(before.Tests, after.Tests)
	if len(f2p) == 0 {
		return t, "no test fails without its code change and passes with it", nil
	}
	short := c
	if len(short) > 12 {
		short = short[:12]
	}
	id := cmp.Or(cm.ID, filepath.Base(repo)+"-"+short)
	statement := strings.TrimSpace(string(msg))
	if cm.Statement != "" {
		statement = cm.Statement
	}
	return Task{
		InstanceID: id, Repo: opt.Name, RepoPath: minedRepoPath(repo, opt.TaskDir), BaseCommit: parent,
		ProblemStatement: statement, TestPatch: string(testPatch), FailToPass: f2p, PassToPass: p2p,
		TestCmd: opt.TestCmd, Image: opt.Image, ReferencePatch: string(fix),
	}, "", nil
}

// classifyTests returns the tests of after that fail before and pass after (a test below a
// module or package that failed as a whole before failed), and those passing both ways.
func classifyTests(before, after map[string]verify.Status) (f2p, p2p []string) {
	ix := newIndex(before)
	for k, s := range after {
		if s != verify.Pass {
			continue
		}
		switch ix.lookup(k) {
		case OutcomeFail:
			f2p = append(f2p, k)
		case OutcomePass:
			p2p = append(p2p, k)
		}
	}
	slices.Sort(f2p)
	slices.Sort(p2p)
	return f2p, p2p
}

// minedRepoPath is the repo_path of a task mined from the clone repo, for a task file in
// taskDir ("": this process's folder): relative to it when the clone lies under it, else the
// clone's folder name.
func minedRepoPath(repo, taskDir string) string {
	if rel, ok := under(repo, taskDir); ok {
		return rel
	}
	return filepath.Base(repo)
}

// under returns repo's path relative to dir ("": this process's folder), when it lies there.
func under(repo, dir string) (string, bool) {
	root, err := realPath(cmp.Or(dir, "."))
	if err != nil {
		return "", false
	}
	real, err := realPath(repo)
	if err != nil || !inside(real, root) {
		return "", false
	}
	rel, err := filepath.Rel(root, real)
	return filepath.ToSlash(rel), err == nil
}

// MinedRepos is the folder `frognano eval --repos` must name for a task file in taskDir of
// tasks mined from the clone repo: "" when the clone lies under taskDir (the tasks'
// repo_path is read from there), else the clone's parent folder.
func MinedRepos(repo, taskDir string) string {
	if _, ok := under(repo, taskDir); ok {
		return ""
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}
