package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Bash differs from the reference in one deliberate way. The reference waits (through
// subprocess.run) until both pipes reach end-of-file, so a command that leaves a background
// process holding stdout ("sleep 100 &") hangs until its timeout, and at the timeout it
// kills only bash, leaving the children running. Here every command gets its own process
// group: at the timeout the whole group is killed; and when bash itself exits while
// something still holds the pipes, we wait pipeGrace for them to close and then kill the
// group and report bash's exit status. Background processes that do not hold the pipes
// (output redirected to a file) are left running, as in the reference.
const (
	// pipeGrace is how long output may keep arriving after bash exits.
	pipeGrace = 2 * time.Second
	// killDrain bounds the wait for the pipes after the group was killed; only a process
	// that left the group (setsid) can still hold them then.
	killDrain = 500 * time.Millisecond
	// restartLimit bounds the attempts to start bash after a sweep for a full pids limit.
	restartLimit = 2 * time.Second
	// maxTimeoutSeconds caps absurd timeouts.
	maxTimeoutSeconds = 86400.0
)

// captureKeep is how many bytes of each stream are kept: enough for more than
// bashOutputChars characters however they are encoded (at most 4 bytes each), so the
// visible part of a truncated observation is always in memory. Everything after is only
// counted, so `yes` cannot fill the memory.
const captureKeep = 4*bashOutputChars + 64

// toolBash runs the Bash tool. killed is how many leftover processes sw killed after a
// timeout (always 0 when sw is nil); exit is bash's exit status when the command ran to its
// end (Response.ExitCode), nil otherwise.
func toolBash(ctx context.Context, cwd string, args *pyDict, sw *sweeper) (obs string, killed int, exit *int, err error) {
	command := falsyEmptyStr(args, "command")
	if command == "" {
		return "", 0, nil, pyError("ValueError", "command is required")
	}
	timeout, err := timeoutSeconds(args)
	if err != nil {
		return "", 0, nil, err
	}
	// subprocess.Popen refuses a NUL in an argument before it starts anything.
	if strings.IndexByte(command, 0) >= 0 {
		return "", 0, nil, nulError
	}
	// subprocess.run starts the command, then communicate() fails converting a timeout that
	// poll() cannot take, and run() kills the command at once. frognano does not start it.
	if err := pollTimeoutError(timeout); err != nil {
		return "", 0, nil, err
	}
	return runBash(ctx, cwd, command, math.Min(timeout, maxTimeoutSeconds), sw)
}

// pollTimeoutError is the exception CPython 3.11 raises when communicate() hands the
// remaining time to poll(): the milliseconds are math.ceil(seconds * 1e3) (infinite for
// the largest floats), which must fit _PyTime_t in nanoseconds and then a C int.
func pollTimeoutError(seconds float64) error {
	ms := math.Ceil(seconds * 1e3)
	switch {
	case math.IsInf(ms, 0):
		return pyError("OverflowError", "cannot convert float infinity to integer")
	case ms > math.MaxInt64/1e6:
		return pyError("OverflowError", "timestamp too large to convert to C _PyTime_t")
	case ms > math.MaxInt32:
		return pyError("OverflowError", "timeout is too large")
	}
	return nil
}

// pyMax is Python's max(a, b): b only when b > a, so max(0.1, nan) is 0.1.
func pyMax(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

// rawTimeout is the timeout both the reference's host and its tool runner compute before
// applying their floor: timeout_ms / 1000 when timeout_ms is present and not null, else
// timeout (default 120), read as milliseconds above 1000.
func rawTimeout(args *pyDict) (float64, error) {
	if v, ok := args.get("timeout_ms"); ok && v != nil {
		f, err := pyFloatValue(v)
		if err != nil {
			return 0, err
		}
		return f / 1000.0, nil
	}
	v, ok := args.get("timeout")
	if !ok || v == nil {
		return DefaultBashTimeout, nil
	}
	f, err := pyFloatValue(v)
	if err != nil {
		return 0, err
	}
	if f > 1000 {
		f /= 1000.0
	}
	return f, nil
}

// timeoutSeconds is the reference's _timeout_seconds: rawTimeout, never below 0.1 s (and a
// NaN, which no comparison passes, is 0.1 s too).
func timeoutSeconds(args *pyDict) (float64, error) {
	t, err := rawTimeout(args)
	if err != nil {
		return 0, err
	}
	return pyMax(0.1, t), nil
}

// capture keeps the head of one output stream and decodes all of it on the fly.
type capture struct {
	mu   sync.Mutex
	head []byte
	dec  streamDecoder
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := captureKeep - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	c.dec.write(p)
	return len(p), nil
}

// stream is one pipe from the command and the goroutine draining it.
type stream struct {
	r    *os.File
	cap  capture
	done chan struct{}
}

func newStream() (*stream, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating output pipe: %w", err)
	}
	return &stream{r: r, done: make(chan struct{})}, w, nil
}

func (s *stream) drain() {
	defer close(s.done)
	// A read error (the pipe closed under us after a kill) just ends the capture.
	_, _ = io.Copy(&s.cap, s.r)
}

// runBash runs command under timeout. After a timeout, and when bash cannot start because
// no process can be made, sw (when not nil) kills every leftover process; killed is how many
// it found outside the command's process group. exit is bash's exit status when it ended by
// itself (nil after a timeout or a cancellation, or when it could not start).
func runBash(ctx context.Context, cwd, command string, timeout float64, sw *sweeper) (obs string, killed int, exit *int, err error) {
	stdout, outW, err := newStream()
	if err != nil {
		return "", 0, nil, pyError("OSError", err.Error())
	}
	stderr, errW, err := newStream()
	if err != nil {
		stdout.r.Close()
		outW.Close()
		return "", 0, nil, pyError("OSError", err.Error())
	}
	newCmd := func() *exec.Cmd {
		cmd := exec.Command("/bin/bash", "-lc", command)
		cmd.Dir = cwd
		cmd.Env = bashEnv(cwd)
		// stdin stays /dev/null and stdout/stderr are the capture pipes: os/exec gives the
		// child exactly these three descriptors (every other one the executor holds is
		// close-on-exec), so no command can reach the protocol's stdin or stdout.
		cmd.Stdout, cmd.Stderr = outW, errW
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	cmd := newCmd()
	err = startPreferredForOOM(cmd)
	if sw != nil && errors.Is(err, syscall.EAGAIN) {
		// No process can be made: the sandbox's pids limit is full. Only the model's own
		// processes can fill it, and a command that cannot start cannot time out, so the
		// sweep that frees them after a timeout would never come, and every later Bash call
		// would fail the same way (a process that forks whatever is freed keeps it full).
		// The leftovers are killed now, as after a timeout, and bash is started again; their
		// PIDs are free once the container's init has reaped them, which may take a moment.
		killed = sw.sweep(0) // no process is in group 0: every one killed counts
		deadline := time.Now().Add(restartLimit)
		for pause := time.Millisecond; ; pause = min(2*pause, sweepPause) {
			cmd = newCmd()
			err = startPreferredForOOM(cmd)
			if !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
				break
			}
			time.Sleep(pause)
		}
	}
	outW.Close()
	errW.Close()
	if err != nil {
		stdout.r.Close()
		stderr.r.Close()
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", killed, nil, osError(pe.Err, pe.Path)
		}
		return "", killed, nil, osError(err, "/bin/bash")
	}
	go stdout.drain()
	go stderr.drain()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the status is read from cmd.ProcessState
		close(exited)
	}()
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	pipesClosed := func() <-chan struct{} {
		ch := make(chan struct{})
		go func() {
			<-stdout.done
			<-stderr.done
			close(ch)
		}()
		return ch
	}()
	// finish waits up to d for the pipes, then closes our ends so the drains stop.
	finish := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-pipesClosed:
		case <-t.C:
			stdout.r.Close()
			stderr.r.Close()
			<-pipesClosed
		}
		stdout.r.Close()
		stderr.r.Close()
	}

	deadline := time.NewTimer(time.Duration(timeout * float64(time.Second)))
	defer deadline.Stop()
	select {
	case <-exited:
		grace := time.NewTimer(pipeGrace)
		select {
		case <-pipesClosed:
			grace.Stop()
		case <-grace.C:
			killGroup()
			finish(killDrain)
		}
		stdout.r.Close()
		stderr.r.Close()
		code := exitCode(cmd.ProcessState)
		obs, err := renderBash(fmt.Sprintf("Exit code: %d", code), stdout, stderr, true)
		return obs, killed, &code, err
	case <-deadline.C:
		killGroup()
		<-exited
		if sw != nil {
			// Before the drain: what left the group may hold the pipes.
			killed += sw.sweep(pgid)
		}
		finish(killDrain)
		// The reference decodes the partial output of a timed-out command leniently
		// (errors="replace", no newline translation).
		obs, err := renderBash(fmt.Sprintf("Timed out after %.1fs", timeout), stdout, stderr, false)
		return obs, killed, nil, err
	case <-ctx.Done():
		killGroup()
		<-exited
		finish(killDrain)
		return "", killed, nil, pyError("CancelledError", "tool call cancelled: "+ctx.Err().Error())
	}
}

// oomScoreAdj is the oom_score_adj every Bash command starts with: the most, so that when the
// sandbox runs out of memory the kernel kills the model's processes before the executor.
const oomScoreAdj = "1000"

// ownOOMScore is the executor's own /proc/self/oom_score_adj, opened for reading and writing
// by Harden while the process was still dumpable: afterwards root owns the file, and the
// executor could no longer open it (the kernel checks who may write only at open). Nil when
// the executor was not hardened (tests, other systems).
var ownOOMScore *os.File

// afterBashStart, when set (tests only), is called with the command once bash has started and
// before anything else is done for it: before its timeout starts to run.
var afterBashStart func(cmd *exec.Cmd)

// startPreferredForOOM starts cmd with oom_score_adj oomScoreAdj from its first instruction, so
// that the kernel's OOM killer chooses bash and whatever it starts before the executor. The
// executor runs with the container's 0; a process's score is its memory plus oom_score_adj
// thousandths of the limit, so at 1000 any of the model's processes outranks the executor,
// which a large request (a Write of megabytes) can leave holding over a hundred MiB that the
// Go runtime gives back only slowly. Without it, a build that fills the memory with many
// smaller processes gets the executor killed, and the run ends as a tool error.
//
// A process inherits oom_score_adj when it is made, so the executor takes the value itself for
// the moment of the fork and goes back to its own once the child has exec'd bash: writing it
// into bash after the start would come too late for what bash forked first, when the
// executor was slow to get to it (a busy machine), and a build started that way (`cd x &&
// make`) would keep 0 in all its processes. The executor may always go back to its own value,
// which is at least the lowest the kernel lets it set. Meanwhile it is at 1000 like every
// command, for one fork and exec; a command can kill(2) it anyway.
//
// Without ownOOMScore the value is written into bash right after it started, as well as that
// can be. A command may lower its own value back to 0, the lowest an unprivileged process may
// set; that only lets it make the executor a candidate again, which it can kill(2) anyway. A
// failure is ignored: the command runs as it would have without this.
func startPreferredForOOM(cmd *exec.Cmd) error {
	var own []byte
	raised := false
	if f := ownOOMScore; f != nil {
		var b [16]byte
		if n, err := f.ReadAt(b[:], 0); n > 0 && (err == nil || errors.Is(err, io.EOF)) {
			own = bytes.TrimSpace(b[:n])
			_, err = f.WriteAt([]byte(oomScoreAdj), 0)
			raised = err == nil
		}
	}
	err := cmd.Start()
	if raised {
		_, _ = ownOOMScore.WriteAt(own, 0)
	}
	if err != nil {
		return err
	}
	if afterBashStart != nil {
		afterBashStart(cmd)
	}
	if !raised {
		preferForOOM(cmd.Process.Pid)
	}
	return nil
}

// preferForOOM writes oomScoreAdj into process pid's oom_score_adj.
func preferForOOM(pid int) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString(oomScoreAdj)
	_ = f.Close()
}

// exitCode is Popen.returncode: the exit status, or minus the signal number.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return ps.ExitCode()
}

// renderBash builds the observation from both captures, exactly as the reference's
// f-string followed by _truncate would, without holding more than the captured heads.
// strict selects the normal-exit decoding: strict UTF-8 (the first invalid byte fails
// the call with UnicodeDecodeError, stdout checked first) and universal newlines.
func renderBash(status string, stdout, stderr *stream, strict bool) (string, error) {
	out, errc := &stdout.cap, &stderr.cap
	out.mu.Lock()
	defer out.mu.Unlock()
	errc.mu.Lock()
	defer errc.mu.Unlock()
	out.dec.close()
	errc.dec.close()
	if strict {
		if out.dec.err != "" {
			return "", pyError("UnicodeDecodeError", out.dec.err)
		}
		if errc.dec.err != "" {
			return "", pyError("UnicodeDecodeError", errc.dec.err)
		}
	}
	outText, errText := decodeReplace(out.head), decodeReplace(errc.head)
	outChars, errChars := out.dec.units, errc.dec.units
	if strict {
		outText, errText = translateNewlines(outText), translateNewlines(errText)
		outChars -= out.dec.crlf
		errChars -= errc.dec.crlf
	}
	header := status + "\nSTDOUT:\n"
	const middle = "\nSTDERR:\n"
	full := header + outText + middle + errText
	total := int64(utf8.RuneCountInString(header)+len(middle)) + outChars + errChars
	if total <= bashOutputChars {
		return full, nil
	}
	return fmt.Sprintf("%s\n[truncated %d chars]", prefixRunes(full, bashOutputChars), total-bashOutputChars), nil
}

// BashCommand is the command a Bash call's raw arguments hold, read exactly as the executor
// reads it to run it (Python's json.loads, then the reference's falsy-to-empty rule): "" when
// there is none. The host uses it to know what ran, from the call it sent rather than from
// anything the sandbox printed.
func BashCommand(arguments string) string {
	args, err := parseCall(arguments)
	if err != nil {
		return ""
	}
	return falsyEmptyStr(args, "command")
}
