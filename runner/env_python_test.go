package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/env/envtest"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// slugkitIndex is a PEP 503 index serving the wheel of slugkit 1.0.0, which pyslug's tests import.
func slugkitIndex() map[string][]byte {
	name, whl := envtest.Wheel("slugkit", "1.0.0", map[string]string{
		"slugkit/__init__.py": "import re\n\n__version__ = \"1.0.0\"\n\n\ndef slugify(text):\n" +
			"    return re.sub(r\"[^a-z0-9]+\", \"-\", text.lower()).strip(\"-\")\n",
	})
	return envtest.SimpleIndex("slugkit", map[string][]byte{name: whl})
}

// A Python repository whose tests import a package only its setup can install, from a package
// server of the test's own on a private network. Without setup the tests fail with an import
// error; with the environment, the verification reports the real fix. The agent's phase has
// only lo and no network, its working tree holds nothing setup wrote; the model's edit of
// setup.sh reaches the patch and never runs; a second run reuses the environment.
func TestRunPythonEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := envtest.NewServer(t, docker, "pkgs", slugkitIndex())
	envCfg := env.Config{Network: srv.Network, Env: []string{"PIP_INDEX_URL=" + srv.URL() + "/simple/", "PIP_TRUSTED_HOST=" + srv.Host}}
	dir := checkout(t, "pyslug")
	freshEnvironment(t, dir, sandbox.DefaultImage)

	// Without setup: the tests cannot import slugkit.
	noSetup := envCfg
	noSetup.Disabled = true
	b := envBundle(t, dir, leaftest.LoadModel(t, "finish-immediately.json"), sandbox.DefaultImage, noSetup)
	res, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Environment == nil || res.Environment.Why != "disabled" || res.TestsBefore == nil ||
		!strings.Contains(res.TestsBefore.Tail, "No module named 'slugkit'") {
		t.Fatalf("without setup the tests should fail to import slugkit: env %+v, tests %+v", res.Environment, res.TestsBefore)
	}

	// With it.
	var setupLines []string
	b = envBundle(t, dir, leaftest.LoadModel(t, "env-pyslug.json"), sandbox.DefaultImage, envCfg)
	b.spec.Repo = "test/pyslug"
	b.spec.Observer = setupLines_(func(l string) { setupLines = append(setupLines, l) })
	res, err = b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.SetupFailed != "" {
		if strings.Contains(string(res.SetupLog()), "No module named pip") {
			t.Fatalf("%s has no pip: it was built before pip joined deploy/sandbox/Dockerfile; rebuild it (make sandbox-image)", sandbox.DefaultImage)
		}
		t.Fatalf("setup failed: %s\n%s", res.SetupFailed, res.SetupLog())
	}
	e := res.Environment
	if e == nil || e.Setup == nil || e.Cached || e.BaseImage != sandbox.DefaultImage {
		t.Fatalf("environment %+v: want one built by this run's setup", e)
	}
	keepImage(t, e.Image)
	if !slices.ContainsFunc(setupLines, func(l string) bool { return strings.Contains(l, "Successfully installed slugkit-1.0.0") }) {
		t.Errorf("setup's progress lacks pip's install line: %q", setupLines)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q (error %q)", got, res.Leaf.Error)
	}
	c := res.Comparison
	if c == nil || !slices.Equal(c.Fixed, []string{"tests.test_anchor.test_punctuation", "tests.test_anchor.test_simple"}) || len(c.Broken) != 0 || len(c.StillFailing) != 0 {
		t.Fatalf("comparison = %+v, want exactly the two anchor tests fixed", c)
	}
	if res.TestsBefore.Error != "" || res.TestsAfter.Error != "" || res.TestsAfter.ExitCode != 0 {
		t.Fatalf("tests before %+v, after %+v", res.TestsBefore, res.TestsAfter)
	}
	var files []string
	for _, f := range res.Patch.Files {
		files = append(files, f.Path())
	}
	if !slices.Equal(files, []string{".frognano/setup.sh", "titles/anchor.py"}) {
		t.Errorf("patch files %q: want the fix and the model's setup.sh, nothing setup wrote", files)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, ".frognano/setup.sh") }) {
		t.Errorf("no note that the patch changes the setup script: %q", res.Notes)
	}
	md := report.Markdown(res)
	for _, want := range []string{"## Environment", "Base image: `frognano-sandbox:latest`", "built by this run's setup", "`requirements.txt`"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// The model's patch applied to the working tree, as a later local run would see it: the
	// environment is the base commit's, cached; the model's setup.sh never runs.
	if err := os.WriteFile(filepath.Join(dir, "patch.diff"), res.PatchBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "apply", "patch.diff")
	if err := os.Remove(filepath.Join(dir, "patch.diff")); err != nil {
		t.Fatal(err)
	}
	b = envBundle(t, dir, leaftest.LoadModel(t, "finish-immediately.json"), sandbox.DefaultImage, envCfg)
	b.spec.Repo = "test/pyslug"
	start := time.Now()
	again, err := b.runner.Run(ctx, b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second run (cached environment) took %s in all", time.Since(start))
	if ae := again.Environment; ae == nil || !ae.Cached || ae.Setup != nil || ae.Image != e.Image {
		t.Fatalf("second run's environment %+v: want the cached %s", ae, e.Image)
	}
	if tb := again.TestsBefore; tb == nil || tb.ExitCode != 0 || tb.Error != "" {
		t.Errorf("with the patch in the working tree and the base's environment the tests pass: %+v", tb)
	}
	if !strings.Contains(report.Markdown(again), "cached; no setup ran in this run") {
		t.Error("the report does not say the environment was cached")
	}
}

// setupLines_ observes setup's lines only.
type setupLines_ func(string)

func (f setupLines_) SetupLine(l string)              { f(l) }
func (setupLines_) ModelWait(int, leaf.ModelWait)     {}
func (setupLines_) SandboxWait(int, sandbox.SlotWait) {}
func (setupLines_) TestsStart(int, bool)              {}
