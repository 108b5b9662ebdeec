package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain gives every Bash command a clean HOME: "bash -l" reads the login files of
// HOME, and a developer's own profile (pyenv, nvm...) must not slow or change the tests.
// It also holds the timeout of the commands that must print before it (holdUntilPrinted).
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "executor-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating test HOME:", err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	afterBashStart = holdUntilPrinted
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// holdFiles is the workdir of a command whose timeout must start only once it has printed
// what the test expects to see after the timeout: the command ends its output with
// `: > .printed` (printedMarker). Timeouts are wall-clock from bash's start (as in the
// reference), and a busy machine can start bash (a login shell) later than a test's 0.1 s
// timeout: without the hold, such a command times out before it printed anything.
var holdFiles = map[string]string{".hold": ""}

// printedMarker is what a held command runs once it has printed.
const printedMarker = ": > .printed"

// holdUntilPrinted is afterBashStart for every test: in a workdir holding .hold, it returns
// once the command made .printed (or after a minute, when the check that follows fails).
func holdUntilPrinted(cmd *exec.Cmd) {
	if _, err := os.Stat(filepath.Join(cmd.Dir, ".hold")); err != nil {
		return
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(cmd.Dir, ".printed")); err == nil {
			return
		}
	}
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
