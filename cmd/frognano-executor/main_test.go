package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/executor"
)

// buildStatic builds the binary the way the sandbox image gets it.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "frognano-executor")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building with CGO_ENABLED=0: %v\n%s", err, out)
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
	want := map[string]bool{"github.com/frognano/frognano/runner/executor": true, "github.com/frognano/frognano/cmd/frognano-executor": true}
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
			var resp executor.Response
			readJSON(t, r, &resp)
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
