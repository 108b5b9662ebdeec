package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestRunCommandScannersCannotBeSilenced drives `frognano run` as an operator would, with two
// scanners in FROGNANO_SCANNERS (fake-sast as semgrep, and fake-sast by its own name, whose
// configuration nobody named) and the scripted model of testdata/hostile/silence-scanners.json,
// on a checkout whose base holds a .semgrepignore. The patch (a) writes a nosemgrep comment on
// a flagged line and (b) rewrites .semgrepignore to skip the fixed file (and (c) adds a
// nested one). OUT/report.md lists the comment and says that .semgrepignore was scanned as the
// base has it; semgrep's finding on the fixed line is there, the unnamed scanner's is not;
// stderr warns of the comment. Before, report.md said nothing of either and the finding was
// gone.
func TestRunCommandScannersCannotBeSilenced(t *testing.T) {
	t.Parallel()
	docker, err := sandbox.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()
	image := dockertest.ScanImage(t, docker, filepath.Join("..", "..", "testdata"))
	script := leaftest.Load(t, filepath.Join(leaftest.ModelsDir(t), "..", "hostile", "silence-scanners.json"))
	model := leaftest.NewServer(t, script)
	repo := cliCheckout(t, "pyaverage")
	for p, c := range map[string]string{".semgrepignore": "docs/\n", "fake_sast_plugins/__init__.py": "\"\"\"fake-sast's plugin.\"\"\"\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "scanner configuration"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"run", "--repo", repo, "--task", "Fix the failing test.", "--out", out,
		"--executor", cliExecutor(t), "--image", image},
		envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1",
			"FROGNANO_SCANNERS": "sast=semgrep ok {sarif};; plain=fake-sast ok {sarif}"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	t.Run("SuppressionComment", func(t *testing.T) { // (a)
		if !strings.Contains(report, "## Suppression comments") || !strings.Contains(report, "| `stats/ratio.py` | 1 | `nosemgrep` | Semgrep |") {
			t.Errorf("report.md does not list the nosemgrep comment:\n%s", report)
		}
		if !strings.Contains(stderr.String(), "frognano: WARNING: the patch adds 1 suppression comment(s) that tell a scanner to skip findings:\nfrognano:   stats/ratio.py line 1: nosemgrep (Semgrep)\n") {
			t.Errorf("stderr does not warn of the comment:\n%s", stderr.String())
		}
	})
	t.Run("RewrittenConfiguration", func(t *testing.T) { // (b), and (c)
		for _, w := range []string{
			"- **error** `fake.division` in `stats/basic.py` line 16 (`sast`)",
			"- **error** `fake.division` in `lib/c.py` line 1 (`sast`)",
			"`.semgrepignore` (changed: scanned as the base has it); `lib/.semgrepignore` (added by the patch: left out)",
		} {
			if !strings.Contains(report, w) {
				t.Errorf("report.md lacks %q", w)
			}
		}
		if strings.Contains(report, "`stats/basic.py` line 16 (`plain`)") || strings.Contains(report, "`lib/c.py` line 1 (`plain`)") {
			t.Error("the scanner whose configuration nobody named was not silenced: the control is broken")
		}
	})
}
