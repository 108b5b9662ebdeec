package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
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
// of the run, the model's included, reads them. The seal check (runner/env) refuses an
// environment that holds one as is or in a common encoding, so the script leaves them reversed,
// a form it does not look for (docs/security.md says so): what these tests prove is that
// everything frognano writes is redacted whatever the model learnt. nonce makes the
// environment new to this test.
func setupLeakScript(nonce string) string {
	return "# " + nonce + "\n" +
		"echo \"using the mirror token $MIRROR_TOKEN\"\n" +
		"pw=${PROXY_URL#http://mirror-user:}; pw=${pw%%@*}\n" +
		"printf '%s\\n%s\\n' \"$MIRROR_TOKEN\" \"$pw\" | rev > /opt/leak\n" +
		"chmod 0644 /opt/leak\n"
}

// setupLeakRun is one `frognano run` of the pyaverage checkout whose setup leaves the operator's
// values reversed in /opt/leak (setupLeakScript), with the scripted model of modelFile.
type setupLeakRun struct {
	out            string // the output folder
	stdout, stderr bytes.Buffer
	model          *leaftest.Server
}

func runSetupLeak(t *testing.T, modelFile string) *setupLeakRun {
	t.Helper()
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

	r := &setupLeakRun{out: filepath.Join(t.TempDir(), "out"), model: leaftest.NewServer(t, leaftest.LoadModel(t, modelFile))}
	err = run(context.Background(), []string{"run", "--repo", repo, "--task", "Fix it.", "--out", r.out, "--executor", cliExecutor(t),
		"--test-cmd", "none", "--setup-network", "none"}, envMap(map[string]string{
		"FROGNANO_MODEL_URL":      r.model.URL,
		"FROGNANO_SANDBOX_MEMORY": "512m",
		"FROGNANO_SANDBOX_CPUS":   "1",
		"FROGNANO_SETUP_ENV":      "MIRROR_TOKEN=" + setupToken + " PROXY_URL=" + setupProxyURL,
	}), &r.stdout, &r.stderr)
	for _, ref := range envRefRE.FindAllString(r.stderr.String(), -1) {
		_, _ = docker.ImageRemove(context.Background(), ref, image.RemoveOptions{PruneChildren: true})
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, r.stderr.String())
	}
	return r
}

// haystacks are the run's terminal output and every file of its output folder (name and bytes).
func (r *setupLeakRun) haystacks(t *testing.T) map[string]string {
	t.Helper()
	haystacks := map[string]string{"stdout and stderr": r.stdout.String() + r.stderr.String()}
	err := filepath.WalkDir(r.out, func(p string, d os.DirEntry, err error) error {
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
		if _, ok := haystacks[filepath.Join(r.out, name)]; !ok {
			t.Errorf("%s was not written", name)
		}
	}
	return haystacks
}

// TestRunKeepsOperatorValuesSecret is security issue 17, item 3, against `frognano run`:
// setup writes the operator's FROGNANO_SETUP_ENV values into the image (reversed, past the seal
// check), and the scripted model reads them back, writes the token into a file of its patch
// (and its name) and repeats it in a command and its final message. The value must be nowhere
// in the output folder (report, trajectory, patch) nor on stderr; the patch is refused with a
// note that does not show it.
func TestRunKeepsOperatorValuesSecret(t *testing.T) {
	t.Parallel()
	r := runSetupLeak(t, "run-setup-leak.json")
	// The attack was real: the model read both values from the image (else finding them
	// nowhere would prove nothing).
	var seen strings.Builder
	for _, req := range r.model.Requests() {
		seen.Write(req.Raw)
	}
	for _, v := range []string{setupToken, setupPassword} {
		if !strings.Contains(seen.String(), v) {
			t.Fatalf("the model never saw %q: setup did not leave it in the image", v)
		}
	}
	haystacks := r.haystacks(t)
	for name, hay := range haystacks {
		for _, v := range []string{setupToken, setupPassword} {
			if strings.Contains(hay, v) {
				t.Errorf("%s holds the operator's value %q", name, v)
			}
		}
	}
	if p := haystacks[filepath.Join(r.out, "patch.diff")]; strings.Contains(p, "+MIRROR_TOKEN=") || strings.Contains(p, "diff --git") {
		t.Errorf("the patch holding the operator's value was written:\n%s", p)
	}
	// The refusal is a sentence of frognano's words, not an escaped error chain.
	if rep := haystacks[filepath.Join(r.out, "report.md")]; !strings.Contains(rep, "**The patch was refused:** it would publish a value frognano keeps secret") {
		t.Errorf("report.md does not say why the patch was refused:\n%s", rep)
	}
}

// TestRunRefusesAValueInAnyForm is issue 28's published-tree check through `frognano run`: the
// scripted model writes the operator's token (which setup left reversed) into a file after a
// NUL byte, which git carries as a compressed base85 literal, and base64-encoded into a text
// file. The runner reads each file as it will be published and refuses the patch, naming both
// files and the forms; no output holds the value in any of those forms. On the old code, which
// searched the diff's text, the patch was kept and written to patch.diff.
func TestRunRefusesAValueInAnyForm(t *testing.T) {
	t.Parallel()
	r := runSetupLeak(t, "run-setup-leak-encoded.json")
	haystacks := r.haystacks(t)
	forms := []string{setupToken, base64.StdEncoding.EncodeToString([]byte("mirror " + setupToken))[4:20], hex.EncodeToString([]byte(setupToken))}
	for name, hay := range haystacks {
		for _, v := range forms {
			if strings.Contains(hay, v) {
				t.Errorf("%s holds the operator's value (%q)", name, v)
			}
		}
	}
	if p := haystacks[filepath.Join(r.out, "patch.diff")]; strings.Contains(p, "diff --git") {
		t.Errorf("the patch was kept:\n%s", p)
	}
	rep := haystacks[filepath.Join(r.out, "report.md")]
	// A sentence and a table of the files, each with its form, as report.md reads in a terminal:
	// before, one escaped note ("The patch was refused\: …: \"token\.bin\" \(holds …").
	for _, want := range []string{"**The patch was refused:** it would publish a value frognano keeps secret",
		"| `notes.txt` | holds a value frognano keeps secret, base64-encoded |", "| `token.bin` | holds a value frognano keeps secret, as is |"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report.md lacks %q:\n%s", want, rep)
		}
	}
}
