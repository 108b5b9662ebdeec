package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/frognano/frognano/internal/buildtest"
	"github.com/frognano/frognano/runner/executor"
)

// buildStatic builds the binary the way the sandbox image gets it.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "frognano-executor")
	if err := buildtest.Static(bin, "github.com/frognano/frognano/cmd/frognano-executor"); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestStaticStandardLibraryOnly(t *testing.T) {
	t.Parallel()
	bin := buildStatic(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("opening binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has a dynamic loader (PT_INTERP); it must be static")
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("listing dependencies: %v", err)
	}
	// internal/secretform, the seal check's forms, is standard-library only too (its own
	// imports are checked here with the rest).
	want := map[string]bool{"github.com/frognano/frognano/runner/executor": true, "github.com/frognano/frognano/cmd/frognano-executor": true,
		"github.com/frognano/frognano/internal/secretform": true}
	for _, dep := range strings.Fields(string(out)) {
		if !want[dep] {
			t.Errorf("non-standard dependency %s", dep)
		}
	}
}

func TestBinaryServesStdio(t *testing.T) {
	t.Parallel()
	bin := buildStatic(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		cwd  string
	}{
		{"WorkdirFlag", []string{"-workdir", dir}, ""},
		{"DefaultIsCurrentDirectory", nil, dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, tt.args...)
			cmd.Dir = tt.cwd
			cmd.Stdin = strings.NewReader(`{"id":"1","tool":"Read","arguments":"{\"file_path\":\"a.txt\"}"}` + "\n")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatalf("starting executor: %v", err)
			}
			r := bufio.NewReader(stdout)
			var ready executor.Ready
			readJSON(t, r, &ready)
			if !ready.Ready || ready.PID != cmd.Process.Pid {
				t.Errorf("ready line %+v", ready)
			}
			resp := readAnswer(t, r, "1", "")
			if resp.ID != "1" || resp.Observation != "a.txt\n1. alpha" {
				t.Errorf("response %+v", resp)
			}
			if rest, _ := io.ReadAll(r); len(rest) != 0 {
				t.Errorf("unexpected output after the response: %q", rest)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("executor exited with %v at end of input", err)
			}
		})
	}
}

// TestProtocolStreamsAreNotInherited: after Harden the executor's descriptors 0 and 1 are
// /dev/null and the protocol runs on close-on-exec copies, so a command's descriptors are its
// own: stdin /dev/null, stdout and stderr the capture pipes, never the protocol's pipes.
func TestProtocolStreamsAreNotInherited(t *testing.T) {
	t.Parallel()
	bin := buildStatic(t)
	cmd := exec.Command(bin, "-workdir", t.TempDir())
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
	r := bufio.NewReader(stdout)
	var ready executor.Ready
	readJSON(t, r, &ready)

	// The executor's own 0 and 1 (read as the test's user, root in CI, which may look).
	for _, fd := range []string{"0", "1"} {
		if target, err := os.Readlink(filepath.Join("/proc", fmt.Sprint(ready.PID), "fd", fd)); err == nil && target != os.DevNull {
			t.Errorf("executor descriptor %s is %s, want %s", fd, target, os.DevNull)
		}
	}
	protocol := map[string]bool{pipeName(t, stdin): true, pipeName(t, stdout): true}
	req, _ := json.Marshal(executor.Request{ID: "1", Nonce: "n", Tool: "Bash",
		Arguments: `{"command":"for f in /proc/$$/fd/*; do echo \"${f##*/} $(readlink $f)\"; done"}`})
	if _, err := stdin.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	resp := readAnswer(t, r, "1", "n")
	out, _, _ := strings.Cut(strings.TrimPrefix(resp.Observation, "Exit code: 0\nSTDOUT:\n"), "\nSTDERR:")
	fds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fd, target, _ := strings.Cut(line, " ")
		fds[fd] = target
		if protocol[target] {
			t.Errorf("the command holds the executor's protocol pipe %s at descriptor %s", target, fd)
		}
	}
	if fds["0"] != os.DevNull || !strings.HasPrefix(fds["1"], "pipe:") || !strings.HasPrefix(fds["2"], "pipe:") {
		t.Errorf("command descriptors %v, want 0 %s and 1, 2 pipes (%q)", fds, os.DevNull, resp.Observation)
	}
}

// pipeName is how /proc shows the pipe f is one end of, e.g. "pipe:[12345]".
func pipeName(t *testing.T, f any) string {
	t.Helper()
	file, ok := f.(*os.File)
	if !ok {
		t.Fatalf("%T is not an *os.File", f)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(file.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pipe:[%d]", st.Ino)
}

// readAnswer reads the answer to call id (with nonce), past its heartbeats: a call that a busy
// machine makes last longer than executor.HeartbeatInterval gets some before its answer.
func readAnswer(t *testing.T, r *bufio.Reader, id, nonce string) executor.Response {
	t.Helper()
	for {
		var resp executor.Response
		readJSON(t, r, &resp)
		if (resp != executor.Response{ID: id, Nonce: nonce, Alive: true}) {
			return resp
		}
	}
}

func readJSON(t *testing.T, r *bufio.Reader, v any) {
	t.Helper()
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading line: %v", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		t.Fatalf("decoding %q: %v", line, err)
	}
}
