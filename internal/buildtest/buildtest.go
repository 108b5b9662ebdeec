// Package buildtest builds this module's programs for tests the way the images build them:
// static binaries (CGO_ENABLED=0, -trimpath), so that a sandbox container can run them. It is
// imported only from _test.go files: nothing in frognano's programs may depend on it.
package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Static builds pkg, an import path of this module, into a static binary at out; the error
// carries go build's output.
func Static(out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Once returns a function that builds pkg (Static) into a binary called name, in a folder of
// its own, the first time any test calls it, and returns the binary's path to every caller; a
// failed build fails every test that asks for it.
func Once(pkg, name string) func(t testing.TB) string {
	build := sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "buildtest-")
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, name)
		return path, Static(path, pkg)
	})
	return func(t testing.TB) string {
		t.Helper()
		path, err := build()
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
}
