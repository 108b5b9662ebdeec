package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/executor"
)

// TestExecutorParityThroughContainer runs the same sequence of tool calls through the executor
// binary on the host (on a temporary copy, with a clean environment so the host's login
// profile cannot add noise) and through a real container, and requires byte-identical
// observations:
// the rules of docs/leaf-protocol.md that the executor's table tests check in process hold through
// the container too (path display, truncation, errors, timeouts, state carried between calls).
func TestExecutorParityThroughContainer(t *testing.T) {
	t.Parallel()
	repo := parityTree(t)
	local := t.TempDir()
	if err := os.CopyFS(local, os.DirFS(repo)); err != nil {
		t.Fatal(err)
	}
	sb := readySandbox(t, testConfig(), repo)
	long := strings.Repeat("0123456789", 2100) // over Read's 20,000-character cap
	calls := []struct{ tool, args string }{
		{"Glob", `{"pattern": "**/*.py"}`},
		{"Read", `{"file_path": "pkg/mod.py"}`},
		{"Read", `{"file_path": "pkg/mod.py", "offset": 2, "limit": 1}`},
		{"Read", `{"file_path": "pkg/mod.py", "offset": 0, "limit": 0}`},
		{"Read", `{"path": "pkg/mod.py"}`},
		{"Read", `{"file_path": "missing.txt"}`},
		{"Read", `{"file_path": "pkg"}`},
		{"Read", `{"file_path": "bad-utf8.txt"}`},
		{"Read", `{not json`},
		{"Read", `[1, 2]`},
		{"Write", `{"file_path": "long.txt", "content": "` + long + `"}`},
		{"Read", `{"file_path": "long.txt"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "absent", "new_string": "x"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "", "new_string": "x"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "value", "new_string": "v"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "value", "new_string": "v", "replace_all": "yes"}`},
		{"Read", `{"file_path": "pkg/mod.py"}`},
		{"Write", `{"file_path": "new/dir/file.txt", "content": "héllo\n"}`},
		{"Glob", `{"pattern": "**/*", "path": "new"}`},
		{"Glob", `{"pattern": "*.nothing"}`},
		{"Bash", `{"command": "echo out; echo err >&2; exit 3", "description": "exit code"}`},
		{"Bash", `{"command": "cat new/dir/file.txt pkg/mod.py | wc -l"}`},
		{"Bash", `{"command": "printf 'x%.0s' $(seq 1 30010)"}`},
		{"Bash", `{"command": "echo before; sleep 5", "timeout": 1}`},
		{"Bash", `{"command": "sleep 5", "timeout": 1500}`},
		{"Frobnicate", `{}`},
	}
	ctx := context.Background()
	host := startHostExecutor(t, local)
	for i, c := range calls {
		want := host.call(t, c.tool, c.args)
		got, err := sb.Call(ctx, c.tool, c.args)
		if err != nil {
			t.Fatalf("call %d %s: sandbox error: %v", i, c.tool, err)
		}
		want = strings.ReplaceAll(want, local, "/workspace")
		if got != want {
			t.Errorf("call %d %s %.60s:\n in process: %q\n container:  %q", i, c.tool, c.args, clip(want), clip(got))
		}
	}
}

// hostExecutor is the executor binary run as a plain host process, spoken to over its pipes.
type hostExecutor struct {
	in  *json.Encoder
	out *bufio.Reader
	n   int
}

func startHostExecutor(t *testing.T, workdir string) *hostExecutor {
	t.Helper()
	cmd := exec.Command(executorPath, "-workdir", workdir)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1", "LANG=C.UTF-8"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	h := &hostExecutor{in: json.NewEncoder(stdin), out: bufio.NewReaderSize(stdout, 1<<20)}
	var ready executor.Ready
	line, err := h.out.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &ready) != nil || !ready.Ready {
		t.Fatalf("host executor not ready: %q %v", line, err)
	}
	return h
}

func (h *hostExecutor) call(t *testing.T, tool, args string) string {
	t.Helper()
	h.n++
	id := fmt.Sprint(h.n)
	if err := h.in.Encode(executor.Request{ID: id, Tool: tool, Arguments: args}); err != nil {
		t.Fatal(err)
	}
	line, err := h.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp executor.Response
	if err := json.Unmarshal(line, &resp); err != nil || resp.ID != id {
		t.Fatalf("host executor answered %q (%v)", line, err)
	}
	return resp.Observation
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:200] + " … " + s[len(s)-200:]
	}
	return s
}

func parityTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"pkg/mod.py":      "value = 1\nother = value + 1\nprint(value)\n",
		"pkg/__init__.py": "",
		"top.py":          "import pkg\n",
		"bad-utf8.txt":    "ok \xff\xfe bytes\n",
		".hidden/x.py":    "hidden = True\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
