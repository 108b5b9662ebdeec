package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain gives every Bash command a clean HOME: "bash -l" reads the login files of
// HOME, and a developer's own profile (pyenv, nvm...) must not slow or change the tests.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "executor-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating test HOME:", err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// setup makes a workdir holding files (name -> content; a name ending in "/" is a
// directory) and returns its physical path, which is what observations show.
func setup(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("resolving temp dir: %v", err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jsonArgs renders tool arguments the way a model sends them.
func jsonArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

func run(t *testing.T, dir, tool string, args map[string]any) string {
	t.Helper()
	return Execute(context.Background(), dir, tool, jsonArgs(t, args))
}
