package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// The sandbox is the Leaf loop's tool set.
var _ leaf.Tools = (*sandbox.Sandbox)(nil)

// TestGoImage runs `go test` on a small Go repository in frognano-sandbox-go:test under the
// sandbox's constraints (read-only root, HOME on tmpfs, no network), as the end-to-end tests do.
func TestGoImage(t *testing.T) {
	t.Parallel()
	const image = "frognano-sandbox-go:test"
	if _, err := docker.ImageInspect(context.Background(), image); err != nil {
		t.Fatalf("image %s is missing: %v\n%s", image, err, buildHint)
	}
	repo := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.26\n",
		"calc.go":      "package calc\n\nfunc Sum(n int) (s int) {\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif got := Sum(4); got != 6 {\n\t\tt.Fatalf(\"Sum(4) = %d\", got)\n\t}\n}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig()
	cfg.Image = image
	cfg.Memory = 2 << 30
	sb := newSandbox(t, cfg, "tests-before")
	ctx := context.Background()
	if err := sb.CopyRepo(ctx, repo); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", "go env GOPROXY GOTOOLCHAIN && go test ./..."}, nil, 5*time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "off\nlocal\n") || !strings.Contains(string(res.Stdout), "ok  \texample.com/calc") {
		t.Errorf("go test in the sandbox: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}
