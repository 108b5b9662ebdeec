package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunCommandAttempts: `frognano run --attempts 4` against one model URL behind which four
// scripted sessions answer (in whatever order the attempts reach it), only one of which fixes
// pyaverage: the fix is chosen, written at the top and in its attempt-K/ folder, every
// attempt has its folder, and the report has the table.
func TestRunCommandAttempts(t *testing.T) {
	t.Parallel()
	var servers []*leaftest.Server
	for _, s := range []string{"e2e-pyaverage.json", "attempt-wrong-fix.json", "attempt-unrelated.json", "finish-immediately.json"} {
		servers = append(servers, leaftest.NewServer(t, leaftest.LoadModel(t, s)))
	}
	model := leaftest.NewRouter(t, nil, servers...)
	repo := cliCheckout(t, "pyaverage")
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", repo, "--task", "average([2, 4, 6]) returns 6 instead of 4.", "--out", out,
		"--executor", cliExecutor(t), "--attempts", "4"},
		envMap(map[string]string{"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	m := regexp.MustCompile(`chose attempt (\d): attempt \d fixes every test that failed before and breaks none`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("stderr does not say the fix was chosen:\n%s", log)
	}
	for _, want := range []string{"attempt 1 | step", "attempt 4 | step", "fixed 2, broken 0, still failing 0"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	top, err := os.ReadFile(filepath.Join(out, "patch.diff"))
	if err != nil || !strings.Contains(string(top), "+    return total(xs) / len(xs)") {
		t.Fatalf("top patch.diff = %q, %v", top, err)
	}
	chosen, err := os.ReadFile(filepath.Join(out, "attempt-"+m[1], "patch.diff"))
	if err != nil || !bytes.Equal(chosen, top) {
		t.Errorf("attempt-%s/patch.diff differs from the top one: %v", m[1], err)
	}
	for k := 1; k <= 4; k++ {
		for _, f := range []string{"patch.diff", "trajectory.json", "report.md"} {
			if _, err := os.Stat(filepath.Join(out, "attempt-"+string(rune('0'+k)), f)); err != nil {
				t.Errorf("attempt %d: %v", k, err)
			}
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(report), "## Attempts") || !strings.Contains(string(report), "**chosen**") {
		t.Errorf("report.md lacks the attempts table:\n%s", report)
	}
}
