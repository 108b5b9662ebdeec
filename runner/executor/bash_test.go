package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"ExitCodeAndStreams", map[string]any{"command": "echo hi; echo err >&2; exit 3"}, "Exit code: 3\nSTDOUT:\nhi\n\nSTDERR:\nerr\n"},
		{"EmptyOutput", map[string]any{"command": "true"}, "Exit code: 0\nSTDOUT:\n\nSTDERR:\n"},
		{"RunsInWorkdir", map[string]any{"command": "cat a.txt"}, "Exit code: 0\nSTDOUT:\nA\n\nSTDERR:\n"},
		{"LoginShell", map[string]any{"command": "shopt -q login_shell && echo login"}, "Exit code: 0\nSTDOUT:\nlogin\n\nSTDERR:\n"},
		{"StdinIsEmpty", map[string]any{"command": "cat; echo done"}, "Exit code: 0\nSTDOUT:\ndone\n\nSTDERR:\n"},
		{"UniversalNewlines", map[string]any{"command": `printf 'a\r\nb\rc'`}, "Exit code: 0\nSTDOUT:\na\nb\nc\nSTDERR:\n"},
		{"KilledBySignal", map[string]any{"command": "kill -9 $$"}, "Exit code: -9\nSTDOUT:\n\nSTDERR:\n"},
		{"DescriptionIgnored", map[string]any{"command": "echo x", "description": "print x"}, "Exit code: 0\nSTDOUT:\nx\n\nSTDERR:\n"},
		{"NullTimeoutIsDefault", map[string]any{"command": "echo x", "timeout": nil}, "Exit code: 0\nSTDOUT:\nx\n\nSTDERR:\n"},
		{"InvalidUTF8OnStdout", map[string]any{"command": `printf 'ok\377'`}, "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 2: invalid start byte"},
		{"TruncatedUTF8OnStderr", map[string]any{"command": `printf ok; printf '\342\202' >&2`}, "UnicodeDecodeError: 'utf-8' codec can't decode bytes in position 0-1: unexpected end of data"},
		{"InvalidContinuation", map[string]any{"command": `printf 'a\342\202A'`}, "UnicodeDecodeError: 'utf-8' codec can't decode bytes in position 1-2: invalid continuation byte"},
		{"MissingCommand", map[string]any{}, "ValueError: command is required"},
		{"EmptyCommand", map[string]any{"command": ""}, "ValueError: command is required"},
		{"BadTimeout", map[string]any{"command": "echo x", "timeout": "abc"}, "ValueError: could not convert string to float: 'abc'"},
		{"ListTimeoutMs", map[string]any{"command": "echo x", "timeout_ms": []any{1}}, "TypeError: float() argument must be a string or a real number, not 'list'"},
		{"InfiniteTimeout", map[string]any{"command": "echo x", "timeout": " inf "}, "OverflowError: cannot convert float infinity to integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, map[string]string{"a.txt": "A\n"})
			if got := run(t, dir, "Bash", tt.args); got != tt.want {
				t.Errorf("Bash(%v)\n got: %q\nwant: %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestBashTimeout(t *testing.T) {
	t.Parallel()
	// Each command prints, then sleeps far past its timeout, which starts once it printed
	// (holdFiles).
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"Seconds", map[string]any{"timeout": 0.3}, "Timed out after 0.3s"},
		{"OverThousandIsMilliseconds", map[string]any{"timeout": 1500}, "Timed out after 1.5s"},
		{"TimeoutMs", map[string]any{"timeout_ms": 250}, "Timed out after 0.2s"}, // Python's %.1f of 0.25
		{"TimeoutMsWins", map[string]any{"timeout_ms": 300, "timeout": 100}, "Timed out after 0.3s"},
		{"NegativeIsMinimum", map[string]any{"timeout": -3}, "Timed out after 0.1s"},
		{"StringSeconds", map[string]any{"timeout": "0.4"}, "Timed out after 0.4s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, holdFiles)
			args := map[string]any{"command": "echo started; echo warn >&2; " + printedMarker + "; exec sleep 60"}
			for k, v := range tt.args {
				args[k] = v
			}
			want := tt.want + "\nSTDOUT:\nstarted\n\nSTDERR:\nwarn\n"
			if got := run(t, dir, "Bash", args); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestBashTimeoutOutputDecodedLeniently(t *testing.T) {
	t.Parallel()
	dir := setup(t, holdFiles)
	got := run(t, dir, "Bash", map[string]any{"command": `printf '\377x\r\n'; ` + printedMarker + `; exec sleep 60`, "timeout": 0.3})
	if want := "Timed out after 0.3s\nSTDOUT:\n\uFFFDx\r\n\nSTDERR:\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// gone waits until pid no longer runs (exited or a zombie nobody reaped yet).
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:]); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling external state, bounded by the deadline
	}
	t.Fatalf("process %d still running", pid)
}

func readPID(t *testing.T, dir string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "bg.pid"))))
	if err != nil {
		t.Fatalf("reading background pid: %v", err)
	}
	return pid
}

func TestBashKillsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		timeout float64
		want    string
	}{
		// At the timeout the whole group dies, including the background child.
		{"AtTimeout", "sleep 300 & echo $! > bg.pid; echo main; " + printedMarker + "; sleep 300", 0.5, "Timed out after 0.5s\nSTDOUT:\nmain\n\nSTDERR:\n"},
		// bash exits but a background child holds stdout: the call returns after the
		// grace period with bash's status instead of waiting for the timeout.
		{"BackgroundHoldsStdout", "sleep 300 & echo $! > bg.pid; echo hi", 60, "Exit code: 0\nSTDOUT:\nhi\n\nSTDERR:\n"},
		{"SubshellBackgroundHoldsStdout", "(sleep 300 & echo $! > bg.pid); echo hi; exit 4", 60, "Exit code: 4\nSTDOUT:\nhi\n\nSTDERR:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var files map[string]string
			if strings.Contains(tt.command, printedMarker) {
				files = holdFiles // the timeout starts once it printed
			}
			dir := setup(t, files)
			got := run(t, dir, "Bash", map[string]any{"command": tt.command, "timeout": tt.timeout})
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			gone(t, readPID(t, dir))
		})
	}
}

func TestBashLeavesDetachedBackgroundRunning(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	got := run(t, dir, "Bash", map[string]any{"command": "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo ok"})
	if want := "Exit code: 0\nSTDOUT:\nok\n\nSTDERR:\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	pid := readPID(t, dir)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("background process with redirected output was killed: %v", err)
	}
}

func TestBashCancel(t *testing.T) {
	t.Parallel()
	dir := setup(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	started := filepath.Join(dir, "bg.pid")
	done := make(chan string)
	go func() {
		done <- Execute(ctx, dir, "Bash", `{"command": "echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 300"}`)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("command never started")
		}
		time.Sleep(10 * time.Millisecond) // polling external state, bounded by the deadline
	}
	cancel()
	if got := <-done; got != "CancelledError: tool call cancelled: context canceled" {
		t.Errorf("got %q", got)
	}
	gone(t, readPID(t, dir))
}

func TestBashTruncation(t *testing.T) {
	t.Parallel()
	// "Exit code: 0\nSTDOUT:\n" + OUT + "\nSTDERR:\n" is 30 characters plus OUT.
	tests := []struct {
		name    string
		command string
		suffix  string
	}{
		{"ExactlyAtLimit", `printf 'é%.0s' $(seq 1 29970)`, "é\nSTDERR:\n"},
		{"OneOver", `printf 'é%.0s' $(seq 1 29971)`, "\n[truncated 1 chars]"},
		{"CRLFCountsOnce", `printf 'x\r\n%.0s' $(seq 1 14985)`, "x\n\nSTDERR:\n"},
		{"StderrCounts", `printf 'é%.0s' $(seq 1 29971) >&2`, "é\n[truncated 1 chars]"},
		// 50 MB of output: only the head is kept, the rest is counted.
		{"Large", `yes | head -c 50000000`, fmt.Sprintf("\n[truncated %d chars]", 50000000+30-bashOutputChars)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t, nil)
			got := run(t, dir, "Bash", map[string]any{"command": tt.command})
			if !strings.HasSuffix(got, tt.suffix) {
				t.Fatalf("observation ends %q, want suffix %q", got[max(0, len(got)-60):], tt.suffix)
			}
			body, _, _ := strings.Cut(got, "\n[truncated")
			if n := len([]rune(body)); n > bashOutputChars {
				t.Errorf("kept %d characters, limit %d", n, bashOutputChars)
			}
		})
	}
}

func TestCaptureKeepsBoundedHead(t *testing.T) {
	t.Parallel()
	var c capture
	chunk := []byte(strings.Repeat("y\n", 32<<10))
	for range 64 {
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.head) != captureKeep {
		t.Errorf("head holds %d bytes, want %d", len(c.head), captureKeep)
	}
	if want := int64(64 * len(chunk)); c.dec.units != want {
		t.Errorf("counted %d characters, want %d", c.dec.units, want)
	}
}
