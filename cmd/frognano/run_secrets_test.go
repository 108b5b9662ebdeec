package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/gittest"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// The operator's setup values of the secrets tests (FROGNANO_SETUP_ENV): a token, and a proxy
// URL whose password the model gets alone.
const (
	setupToken    = "s3cr3t-canary-value-1234"
	setupPassword = "proxy-pass-5678"
	setupProxyURL = "http://mirror-user:" + setupPassword + "@proxy.invalid:3128"
)

// setupLeakScript is a .frognano/setup.sh that does what hostile setup code (or a package it
// installs) can: write the operator's values into the environment image, where every sandbox
// of the run, the model's included, reads them. nonce makes the environment new to this test.
func setupLeakScript(nonce string) string {
	return "# " + nonce + "\n" +
		"echo \"using the mirror token $MIRROR_TOKEN\"\n" +
		"pw=${PROXY_URL#http://mirror-user:}; pw=${pw%%@*}\n" +
		"printf '%s\\n%s\\n' \"$MIRROR_TOKEN\" \"$pw\" > /opt/leak\n" +
		"chmod 0644 /opt/leak\n"
}

// TestRunKeepsOperatorValuesSecret is security issue 17, item 3, against `frognano run`:
// setup writes the operator's FROGNANO_SETUP_ENV values into the image, and the scripted model
// reads them, writes the token into a file of its patch (and its name) and repeats it in a
// command and its final message. The value must be nowhere in the output folder (report,
// trajectory, patch) nor on stderr; the patch is refused with a note that does not show it.
func TestRunKeepsOperatorValuesSecret(t *testing.T) {
	t.Parallel()
	repo := cliCheckout(t, "pyaverage")
	if err := os.MkdirAll(filepath.Join(repo, ".frognano"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, envpkg.ScriptFile), []byte(setupLeakScript(svcRandom(t))), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "setup")
	docker, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()

	model := leaftest.NewServer(t, leaftest.LoadModel(t, "run-setup-leak.json"))
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"run", "--repo", repo, "--task", "Fix it.", "--out", out, "--executor", cliExecutor(t),
		"--test-cmd", "none", "--setup-network", "none"}, envMap(map[string]string{
		"FROGNANO_MODEL_URL":      model.URL,
		"FROGNANO_SANDBOX_MEMORY": "512m",
		"FROGNANO_SANDBOX_CPUS":   "1",
		"FROGNANO_SETUP_ENV":      "MIRROR_TOKEN=" + setupToken + " PROXY_URL=" + setupProxyURL,
	}), &stdout, &stderr)
	for _, ref := range envRefRE.FindAllString(stderr.String(), -1) {
		_, _ = docker.ImageRemove(context.Background(), ref, image.RemoveOptions{PruneChildren: true})
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}

	// The attack was real: the model read both values from the image (else finding them
	// nowhere would prove nothing).
	var seen strings.Builder
	for _, r := range model.Requests() {
		seen.Write(r.Raw)
	}
	for _, v := range []string{setupToken, setupPassword} {
		if !strings.Contains(seen.String(), v) {
			t.Fatalf("the model never saw %q: setup did not leave it in the image", v)
		}
	}

	haystacks := map[string]string{"stdout and stderr": stdout.String() + stderr.String()}
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		haystacks[p] = p + "\n" + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"patch.diff", "trajectory.json", "report.md"} {
		if _, ok := haystacks[filepath.Join(out, name)]; !ok {
			t.Errorf("%s was not written", name)
		}
	}
	for name, hay := range haystacks {
		for _, v := range []string{setupToken, setupPassword} {
			if strings.Contains(hay, v) {
				t.Errorf("%s holds the operator's value %q", name, v)
			}
		}
	}
	if p := haystacks[filepath.Join(out, "patch.diff")]; strings.Contains(p, "+MIRROR_TOKEN=") || strings.Contains(p, "diff --git") {
		t.Errorf("the patch holding the operator's value was written:\n%s", p)
	}
	// The note is prose, with markdown's punctuation escaped.
	if r := haystacks[filepath.Join(out, "report.md")]; !strings.Contains(r, "The patch was refused\\: it holds a value frognano keeps secret") {
		t.Errorf("report.md does not say why the patch was refused:\n%s", r)
	}
}
