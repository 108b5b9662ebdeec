package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// The sandbox is the Leaf loop's tool set.
var _ leaf.Tools = (*sandbox.Sandbox)(nil)

// TestGoImage runs `go test` on a small Go repository in frognano-sandbox-go:test under the
// sandbox's constraints (read-only root, HOME on tmpfs, no network), as the end-to-end tests do.
func TestGoImage(t *testing.T) {
	t.Parallel()
	sb := goSandbox(t, map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.26\n",
		"calc.go":      "package calc\n\nfunc Sum(n int) (s int) {\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif got := Sum(4); got != 6 {\n\t\tt.Fatalf(\"Sum(4) = %d\", got)\n\t}\n}\n",
	})
	ctx := context.Background()
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", "go env GOPROXY GOTOOLCHAIN && go test ./..."}, nil, 5*time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "off\nlocal\n") || !strings.Contains(string(res.Stdout), "ok  \texample.com/calc") {
		t.Errorf("go test in the sandbox: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestGoImageStandardLibrary builds and runs, in frognano-sandbox-go:test under the sandbox's
// constraints, a program that imports go/format (which needs go/printer and go/doc/comment),
// and lists the whole standard library: the image must carry every package of the host's Go
// tree, not only the common ones (issue #13: an unanchored exclusion once dropped src/go/doc).
func TestGoImageStandardLibrary(t *testing.T) {
	t.Parallel()
	sb := goSandbox(t, map[string]string{
		"go.mod": "module example.com/fmtcheck\n\ngo 1.26\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"go/format\"\n\t\"os\"\n)\n\n" +
			"func main() {\n\tout, err := format.Source([]byte(\"package x\\nvar  a =  1\\n\"))\n" +
			"\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n\tfmt.Print(string(out))\n}\n",
	})
	ctx := context.Background()
	// The program's output, then a marker, then every package of std that does not load.
	script := `go run . && echo '--- std' && go list -e -deps -f '{{with .Error}}{{.}}{{end}}' std`
	res, err := sb.Exec(ctx, []string{"/bin/bash", "-lc", script}, nil, 5*time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	const want = "package x\n\nvar a = 1\n--- std\n"
	if res.ExitCode != 0 || string(res.Stdout) != want {
		t.Errorf("go/format program and std listing: exit %d, stdout %q, want %q\nstderr:\n%s", res.ExitCode, res.Stdout, want, res.Stderr)
	}
}

// goSandbox starts a tests-before sandbox of frognano-sandbox-go:test (2 GiB: the Go build
// needs it) holding a repository of files.
func goSandbox(t *testing.T, files map[string]string) *sandbox.Sandbox {
	t.Helper()
	const image = "frognano-sandbox-go:test"
	if _, err := docker.ImageInspect(context.Background(), image); err != nil {
		t.Fatalf("image %s is missing: %v\n%s", image, err, dockertest.BuildHint)
	}
	repo := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig()
	cfg.Image = image
	cfg.Memory = 2 << 30
	sb := newSandbox(t, cfg, "tests-before")
	if err := sb.CopyRepo(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	return sb
}
