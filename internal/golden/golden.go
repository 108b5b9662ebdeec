// Package golden compares what a test produced with a golden file, and rewrites the file
// instead when the test binary runs with -update. It owns the -update flag of every test
// binary that imports it (such a package must not define its own), and it is imported only
// from _test.go files: nothing in frognano's programs may depend on it.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Check compares got with testdata/golden/NAME at the root of the module (the folder of the
// nearest go.mod above the test's working directory); -update rewrites that file.
func Check(t testing.TB, name, got string) {
	t.Helper()
	CheckFile(t, filepath.Join(moduleRoot(t), "testdata", "golden", name), got)
}

// CheckFile compares got with the file at path and fails t, showing the first differing
// lines and all of got, when they differ; -update writes got to path (creating its folder)
// instead.
func CheckFile(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update after checking the change):\n%sgot:\n%s",
			filepath.Base(path), diff(string(want), got), got)
	}
}

// moduleRoot is the folder of the nearest go.mod above the working directory (go test runs
// a package's tests in its folder).
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("golden: no go.mod above the working directory")
		}
		dir = parent
	}
}

// diff shows the first ten lines that differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
