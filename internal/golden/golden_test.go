package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.fatal = true
	runtime.Goexit()
}

// check runs CheckFile with a recorder in a goroutine of its own, as Fatalf ends it.
func check(t *testing.T, path, got string) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		CheckFile(r, path, got)
	}()
	<-done
	return r
}

// TestCheckFile sets -update itself (so it is not parallel: parallel tests start after it).
func TestCheckFile(t *testing.T) {
	was := *update
	defer func() { *update = was }()
	*update = false
	path := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("Same", func(t *testing.T) {
		if r := check(t, path, "one\ntwo\n"); len(r.errors) != 0 {
			t.Errorf("same text reported: %q", r.errors)
		}
	})
	t.Run("Differs", func(t *testing.T) {
		r := check(t, path, "one\nTWO\n")
		if len(r.errors) != 1 || r.fatal {
			t.Fatalf("reports = %q (fatal %v), want one error", r.errors, r.fatal)
		}
		for _, want := range []string{"x.md differs", "line 2:", `want "two"`, `got  "TWO"`, "got:\none\nTWO\n"} {
			if !strings.Contains(r.errors[0], want) {
				t.Errorf("report lacks %q:\n%s", want, r.errors[0])
			}
		}
	})
	t.Run("Missing", func(t *testing.T) {
		r := check(t, path+".none", "one\n")
		if !r.fatal || len(r.errors) != 1 || !strings.Contains(r.errors[0], "run with -update to create it") {
			t.Errorf("reports = %q (fatal %v), want a fatal one naming -update", r.errors, r.fatal)
		}
	})
	t.Run("Update", func(t *testing.T) {
		*update = true
		defer func() { *update = false }()
		written := filepath.Join(filepath.Dir(path), "new", "y.md")
		if r := check(t, written, "three\n"); len(r.errors) != 0 {
			t.Fatalf("-update reported: %q", r.errors)
		}
		if b, err := os.ReadFile(written); err != nil || string(b) != "three\n" {
			t.Errorf("-update wrote %q, %v; want \"three\\n\"", b, err)
		}
	})
}

func TestCheckFindsTheModuleRoot(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "golden", "golden.go")); err != nil {
		t.Errorf("module root %s does not hold this package: %v", root, err)
	}
}

func TestDiffShowsAtMostTenLines(t *testing.T) {
	t.Parallel()
	want := strings.Repeat("a\n", 20)
	got := strings.Repeat("b\n", 20)
	if n := strings.Count(diff(want, got), "line "); n != 10 {
		t.Errorf("diff shows %d lines, want 10", n)
	}
}

// TestImportedOnlyFromTests holds the package doc's promise: no program of frognano imports it.
func TestImportedOnlyFromTests(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	const path = `"github.com/frognano/frognano/internal/golden"`
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), path) {
			t.Errorf("%s imports internal/golden, which is for tests only", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
