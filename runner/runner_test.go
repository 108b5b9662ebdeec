package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// goImage is the sandbox image with a Go toolchain, derived from the default one the way a
// project would derive its own (deploy/sandbox/Dockerfile.go-example).
const goImage = "frognano-sandbox-go:test"

var (
	docker       *client.Client
	executorPath string
)

func TestMain(m *testing.M) {
	dockertest.Main(m, dockertest.Options{Tests: "the runner tests", Images: []string{goImage}, Executor: true}, func(e dockertest.Env) {
		docker, executorPath = e.Docker, e.Executor
	})
}

// checkout copies testdata/repos/NAME into a fresh git repository with one commit.
func checkout(t *testing.T, name string) string { return checkoutTB(t, name) }

func checkoutTB(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "repos", name))); err != nil {
		t.Fatal(err)
	}
	gittest.Commit(t, dir, "initial")
	return dir
}

type bundle struct {
	runner *runner.Runner
	model  *leaftest.Server
	spec   runner.Spec
}

func setup(t *testing.T, repo, script, image string) bundle {
	t.Helper()
	return setupWith(t, repo, leaftest.LoadModel(t, script), image)
}

// setupWith is setup with a script loaded from anywhere (testdata/hostile, for example);
// edit, when given, changes the runner's configuration.
func setupWith(t *testing.T, repo string, script leaftest.Script, image string, edit ...func(*runner.Config)) bundle {
	t.Helper()
	model := leaftest.NewServer(t, script)
	cfg := runner.DefaultConfig()
	cfg.Sandbox.Image = image
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 1 << 30
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Owner = "runner-test"
	cfg.Sandbox.Env = []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local"}
	cfg.Leaf.BaseURL = model.URL
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestTimeout = 3 * time.Minute
	for _, e := range edit {
		e(&cfg)
	}
	r := runner.New(docker, cfg, nil)
	spec := runner.Spec{RunID: fmt.Sprintf("rt-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano()), RepoDir: checkout(t, repo), Task: "Fix the failing test."}
	spec.RunID = strings.NewReplacer("/", "-", "_", "-").Replace(spec.RunID)
	return bundle{runner: r, model: model, spec: spec}
}

// containersOf lists the containers (running or not) labelled with the run.
func containersOf(t *testing.T, runID string) []string {
	t.Helper()
	list, err := docker.ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelRunID+"="+runID)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestRunPythonEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, "pyaverage", "e2e-pyaverage.json", sandbox.DefaultImage)
	headBefore := gittest.Git(t, b.spec.RepoDir, "rev-parse", "HEAD")
	var steps []leaf.Step
	res, err := b.runner.Run(context.Background(), b.spec, func(s leaf.Step) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q, want agent (error %q)", got, res.Leaf.Error)
	}
	if len(steps) != 5 {
		t.Errorf("onStep called %d times, want 5", len(steps))
	}
	p := string(res.PatchBytes())
	for _, want := range []string{"diff --git a/stats/basic.py b/stats/basic.py", "-    return total(xs) / (len(xs) - 1)", "+    return total(xs) / len(xs)"} {
		if !strings.Contains(p, want) {
			t.Errorf("patch lacks %q:\n%s", want, p)
		}
	}
	if n := strings.Count(p, "diff --git"); n != 1 {
		t.Errorf("patch touches %d files, want 1 (no litter such as .pytest_cache):\n%s", n, p)
	}
	if res.TestCommand != "python3 -m pytest -q" {
		t.Errorf("detected test command %q", res.TestCommand)
	}
	if res.TestsBefore == nil || res.TestsBefore.ExitCode == 0 || res.TestsBefore.Error != "" {
		t.Fatalf("tests before should fail: %+v", res.TestsBefore)
	}
	if res.TestsAfter == nil || res.TestsAfter.ExitCode != 0 || !res.TestsAfter.PatchApplied {
		t.Fatalf("tests after should pass with the patch applied: %+v", res.TestsAfter)
	}
	c := res.Comparison
	if c == nil || len(c.Fixed) != 2 || len(c.Broken) != 0 || len(c.StillFailing) != 0 {
		t.Fatalf("comparison = %+v, want 2 fixed", c)
	}
	md := report.Markdown(res)
	for _, want := range []string{"Exit reason: `agent`", "Fixed (2)", "stats/basic.py", "python3 -m pytest -q", "Fixed `average`"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if gittest.Git(t, b.spec.RepoDir, "status", "--porcelain") != "" || gittest.Git(t, b.spec.RepoDir, "rev-parse", "HEAD") != headBefore {
		t.Error("the host checkout was modified")
	}
	if ids := containersOf(t, b.spec.RunID); len(ids) != 0 {
		t.Errorf("containers left behind: %v", ids)
	}
	// An honest offline run: nothing to say about the network (no false positive).
	if !res.Egress.Empty() || strings.Contains(md, "offline sandbox stopped") {
		t.Errorf("an honest run reports network use: %+v", res.Egress)
	}
	traj := res.Trajectory()
	if traj.ExitReason != leaf.ExitAgent || traj.OutputPatch != p {
		t.Errorf("trajectory exit %q, patch matches %v", traj.ExitReason, traj.OutputPatch == p)
	}
}

func TestRunGoEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, "gomax", "e2e-gomax.json", goImage)
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q, want agent (error %q)", got, res.Leaf.Error)
	}
	p := string(res.PatchBytes())
	if !strings.Contains(p, "+\tm := xs[0]") || strings.Count(p, "diff --git") != 1 {
		t.Errorf("unexpected patch:\n%s", p)
	}
	if res.TestCommand != "go test ./..." {
		t.Errorf("detected test command %q", res.TestCommand)
	}
	if res.TestsBefore == nil || res.TestsBefore.ExitCode == 0 {
		t.Fatalf("tests before should fail: %+v", res.TestsBefore)
	}
	if res.TestsAfter == nil || res.TestsAfter.ExitCode != 0 {
		t.Fatalf("tests after should pass: %+v", res.TestsAfter)
	}
	c := res.Comparison
	if c == nil || len(c.Fixed) != 1 || !strings.HasSuffix(c.Fixed[0], "TestMaxNegative") || len(c.Broken) != 0 {
		t.Fatalf("comparison = %+v, want TestMaxNegative fixed", c)
	}
	if !res.Egress.Empty() {
		t.Errorf("an honest Go run (GOPROXY=off) reports network use: %+v", res.Egress)
	}
	if ids := containersOf(t, b.spec.RunID); len(ids) != 0 {
		t.Errorf("containers left behind: %v", ids)
	}
}

func TestRunDropsWorkflowChangesAndLitter(t *testing.T) {
	t.Parallel()
	b := setup(t, "pyaverage", "e2e-workflow-and-litter.json", sandbox.DefaultImage)
	// The repository's own settings: instructions for the model, and a test command that
	// differs from the detected one.
	for name, content := range map[string]string{
		runner.InstructionsFile: "Keep notes in NOTES.md.\n",
		runner.TestCommandFile:  "python3 -m pytest -q tests\n",
	} {
		p := filepath.Join(b.spec.RepoDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, b.spec.RepoDir, "add", "-A")
	gittest.Git(t, b.spec.RepoDir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "settings")
	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	if c := b.model.Requests()[0].Messages[1].Content; c != nil {
		user = *c
	}
	if !strings.Contains(user, "Fix the failing test.") ||
		!strings.Contains(user, "Repository instructions (.frognano/instructions.md):\n\nKeep notes in NOTES.md.") {
		t.Errorf("the model's task lacks the repository instructions: %q", user)
	}
	if res.TestCommand != "python3 -m pytest -q tests" {
		t.Errorf("test command %q, want the repository's own", res.TestCommand)
	}
	p := string(res.PatchBytes())
	if !strings.Contains(p, "b/NOTES.md") || strings.Contains(p, ".github") || strings.Contains(p, "node_modules") || strings.Contains(p, "__pycache__") {
		t.Fatalf("patch should hold NOTES.md only:\n%s", p)
	}
	var dropped []string
	for _, d := range res.Patch.Dropped {
		dropped = append(dropped, d.Reason+":"+d.Path)
	}
	if strings.Join(dropped, ",") != "workflow:.github/workflows/ci.yml" {
		t.Errorf("dropped = %v, want the workflow file", dropped)
	}
	if !strings.Contains(report.Markdown(res), "--allow-workflow-changes") {
		t.Error("report does not say how to keep workflow changes")
	}
	// The tests still fail after: the agent changed no code. Nothing fixed, nothing broken.
	if c := res.Comparison; c == nil || len(c.Fixed) != 0 || len(c.StillFailing) != 2 {
		t.Errorf("comparison = %+v", c)
	}
}

func TestRunCancelledMidToolRemovesSandboxes(t *testing.T) {
	t.Parallel()
	b := setup(t, "pyaverage", "e2e-cancel-in-bash.json", sandbox.DefaultImage)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var res *runner.Result
	var runErr error
	go func() {
		defer close(done)
		res, runErr = b.runner.Run(ctx, b.spec, nil)
	}()
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	if err := b.model.WaitRequests(wctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	cancelled := time.Now()
	<-done
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		t.Fatalf("Run: %v", runErr)
	}
	if runErr == nil && !res.Cancelled {
		t.Fatalf("result not marked cancelled: exit %q", res.ExitReason())
	}
	if ids := containersOf(t, b.spec.RunID); len(ids) != 0 {
		t.Errorf("containers left behind after cancellation: %v", ids)
	}
	t.Logf("Run returned %s after cancel, sandboxes gone", time.Since(cancelled).Round(time.Millisecond))
}

func TestRunRefusesNonCheckout(t *testing.T) {
	t.Parallel()
	r := runner.New(docker, runner.DefaultConfig(), nil)
	_, err := r.Run(context.Background(), runner.Spec{RepoDir: t.TempDir(), Task: "x"}, nil)
	var se *runner.SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "not a git checkout") {
		t.Fatalf("err = %v, want a SetupError saying it is not a git checkout", err)
	}
}

func TestPreflight(t *testing.T) {
	t.Parallel()
	model := leaftest.NewServer(t, leaftest.Script{AllowUnused: true})
	base := runner.DefaultConfig()
	base.Sandbox.ExecutorPath = executorPath
	base.Leaf.BaseURL = model.URL
	tests := []struct {
		name string
		edit func(*runner.Config)
		want string
	}{
		{"OK", func(*runner.Config) {}, ""},
		{"MissingImage", func(c *runner.Config) { c.Sandbox.Image = "frognano-no-such-image:latest" }, "frognano sandbox build"},
		{"MissingMappedImage", func(c *runner.Config) {
			c.Images = env.ImageMap{{Pattern: "acme/*", Image: "frognano-no-such-image:node"}}
		}, "frognano-no-such-image:node is missing"},
		{"MissingSetupNetwork", func(c *runner.Config) { c.Env.Network = "frognano-no-such-network" }, "setup network frognano-no-such-network does not exist"},
		{"HostSetupNetwork", func(c *runner.Config) { c.Env.Network = "host" }, "not setup's own"},
		{"MissingExecutor", func(c *runner.Config) { c.Sandbox.ExecutorPath = "/nonexistent/frognano-executor" }, "make build"},
		{"DynamicExecutor", func(c *runner.Config) { c.Sandbox.ExecutorPath = "/bin/true" }, "CGO_ENABLED=0"},
		{"ModelUnreachable", func(c *runner.Config) { c.Leaf.BaseURL = "http://127.0.0.1:1/v1" }, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := base
			tt.edit(&cfg)
			err := runner.New(docker, cfg, nil).Preflight(context.Background())
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *runner.SetupError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a SetupError mentioning %q", err, tt.want)
			}
		})
	}
}
