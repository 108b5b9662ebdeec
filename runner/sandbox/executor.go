package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/runner/executor"
)

const (
	// maxResponseLine bounds one line from the executor: the executor never writes a longer
	// one (see executor.MaxResponseBytes), so a longer line is forged.
	maxResponseLine = executor.MaxResponseBytes
	// stderrHead and stderrTail are how much of the start and the end of the executor's stderr
	// is kept to explain its death.
	stderrHead = 1 << 10
	stderrTail = 3 << 10
	// executorSilence is how long a call waits without any line from the executor, which
	// writes a heartbeat every executor.HeartbeatInterval while a call runs, before it
	// gives up on it: the executor was stopped (SIGSTOP from a process in the sandbox) or
	// is stuck. Six missed heartbeats leave room for a loaded machine.
	executorSilence = 6 * executor.HeartbeatInterval
)

// ErrUntrustedOutput is wrapped by the error of a Call that read a line the executor cannot
// have written: one past the size cap, one that is not a response, or one whose id and nonce
// do not answer the oldest call still waiting for its answer. The executor is out of reach of
// the model's processes and echoes a per-call nonce they cannot read, so such a line means a
// process in the sandbox got to the stream: nothing it carries becomes an observation, and
// every later Call fails with the same error.
var ErrUntrustedOutput = errors.New("refused the sandbox's tool output, which a process in the sandbox may have forged")

// errLineTooLong ends the stream at a line over maxResponseLine.
var errLineTooLong = fmt.Errorf("a line over %d bytes", maxResponseLine)

// errSilent is next's error when no line came within the silence it was given.
var errSilent = errors.New("no line from the executor")

// executorConn is the open stream to the executor running in the container.
type executorConn struct {
	execID  string
	att     types.HijackedResponse
	lines   chan []byte   // response lines, in order
	done    chan struct{} // closed when the stream ended
	readErr error         // why the stream ended; read after done is closed
	stderr  *stderrBuffer
	stop    chan struct{} // closed by close
	once    sync.Once

	// Guarded by Sandbox.callMu.
	nextID  uint64
	pending []pendingCall // calls sent and not yet answered, oldest first
	failed  error         // set once the output was refused; every later call returns it

	killed atomic.Int64 // leftover processes the executor killed after Bash timeouts
}

// pendingCall is a call whose answer is due: the executor answers in order, echoing both.
type pendingCall struct{ id, nonce string }

func (e *executorConn) close() {
	e.once.Do(func() {
		close(e.stop)
		e.att.Close()
	})
}

// StartExecutor copies the executor binary (Config.ExecutorPath) into the container, outside the
// workspace, starts it as one long-lived process attached over stdin/stdout, and waits for its
// Ready line. It is called once, after CopyRepo.
func (s *Sandbox) StartExecutor(ctx context.Context) error {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.exe.Load() != nil {
		return errors.New("starting the sandbox executor: already started")
	}
	if err := s.copyExecutor(ctx); err != nil {
		return err
	}
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User:       s.cfg.User,
		WorkingDir: s.cfg.Workdir,
		// The executor kills every leftover process of the sandbox user after a Bash timeout
		// (this container's PID namespace holds nothing else of that user but its init and
		// main process, which the executor keeps).
		Cmd:          []string{executorPath, "-workdir", s.cfg.Workdir, "-kill-leftovers"},
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return fmt.Errorf("creating the sandbox executor exec: %w", err)
	}
	// The stream outlives this call: it must not end with ctx, only with Close.
	att, err := s.docker.ContainerExecAttach(context.WithoutCancel(ctx), created.ID, container.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("attaching to the sandbox executor: %w", err)
	}
	e := &executorConn{
		execID: created.ID,
		att:    att,
		lines:  make(chan []byte, 1),
		done:   make(chan struct{}),
		stop:   make(chan struct{}),
		stderr: &stderrBuffer{headMax: stderrHead, tailMax: stderrTail},
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, e.stderr, att.Reader)
		pw.CloseWithError(err) // nil: the reader sees io.EOF
	}()
	go e.readLines(pr)

	ready, err := e.next(ctx, 0)
	if err != nil {
		e.close()
		return s.brokenError(ctx, e, "starting the sandbox executor", err)
	}
	var r executor.Ready
	if err := json.Unmarshal(ready, &r); err != nil || !r.Ready {
		e.close()
		return fmt.Errorf("starting the sandbox executor: unexpected first line %.200q", ready)
	}
	s.exe.Store(e)
	if s.isClosed() {
		// Close ran meanwhile and could not see e.
		e.close()
	}
	return nil
}

// copyExecutor puts the binary at executorPath, owned by root and not writable by the sandbox
// user, once (the network observer and the executor are the same binary). Called with callMu held.
func (s *Sandbox) copyExecutor(ctx context.Context) error {
	if s.copied {
		return nil
	}
	if s.cfg.ExecutorPath == "" {
		return errors.New("starting the sandbox executor: Config.ExecutorPath is empty")
	}
	f, err := os.Open(s.cfg.ExecutorPath)
	if err != nil {
		return fmt.Errorf("opening the executor binary: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("opening the executor binary: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// The directory itself too: its volume starts as a copy of the image's, which an
	// environment image's setup script could have made writable for the sandbox user.
	if err := tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("packing the executor binary: %w", err)
	}
	hdr := &tar.Header{Name: "frognano-executor", Mode: 0o555, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("packing the executor binary: %w", err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("packing the executor binary: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("packing the executor binary: %w", err)
	}
	if err := s.docker.CopyToContainer(ctx, s.id, executorDir, &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copying the executor into the sandbox: %w", err)
	}
	s.copied = true
	return nil
}

// readLines splits the executor's stdout into lines for next, until the stream ends.
func (e *executorConn) readLines(r *io.PipeReader) {
	defer close(e.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, maxResponseLine)
		if err != nil {
			e.readErr = err
			r.CloseWithError(err) // unblocks the demultiplexer if the line was too long
			return
		}
		select {
		case e.lines <- line:
		case <-e.stop:
			return
		}
	}
}

// readLine reads one '\n'-terminated line of at most max bytes ("\n" included).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// next returns the next line from the executor, or why there is none: errSilent when silence
// (unless 0) passed without a line.
func (e *executorConn) next(ctx context.Context, silence time.Duration) ([]byte, error) {
	var timeout <-chan time.Time
	if silence > 0 {
		t := time.NewTimer(silence)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case line := <-e.lines:
		return line, nil
	case <-e.done:
		// A line may have been queued just before the stream ended.
		select {
		case line := <-e.lines:
			return line, nil
		default:
		}
		if e.readErr == nil || errors.Is(e.readErr, io.EOF) {
			return nil, io.EOF
		}
		return nil, e.readErr
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout:
		return nil, errSilent
	}
}

// Call sends one tool call to the executor and returns its observation (Leaf's text, byte for
// byte). err is not nil only when the sandbox itself broke (the executor died or sent nothing,
// not even a heartbeat, for executorSilence; the container is gone or was OOM-killed), the
// executor could not answer (an observation too large to carry), its output was refused
// (ErrUntrustedOutput), or ctx ended; a tool's own failure is an observation. After ctx ends during a call, the next call first skips the abandoned call's
// answer. Call implements leaf.Tools.
func (s *Sandbox) Call(ctx context.Context, tool, arguments string) (string, error) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	e := s.exe.Load()
	if e == nil {
		return "", errors.New("calling a sandbox tool: the executor is not started")
	}
	if e.failed != nil {
		return "", e.failed
	}
	e.nextID++
	call := pendingCall{id: strconv.FormatUint(e.nextID, 10), nonce: rand.Text()}
	req, err := json.Marshal(executor.Request{ID: call.id, Nonce: call.nonce, Tool: tool, Arguments: arguments})
	if err != nil {
		return "", fmt.Errorf("encoding the tool call: %w", err)
	}
	if len(req) > executor.MaxRequestBytes {
		// The executor would answer this without an id; the answer is known.
		return executor.TooLargeObservation, nil
	}
	select {
	case <-e.done:
		return "", s.brokenError(ctx, e, "calling a sandbox tool", io.EOF)
	default:
	}
	e.pending = append(e.pending, call)
	if _, err := e.att.Conn.Write(append(req, '\n')); err != nil {
		return "", s.brokenError(ctx, e, "sending a tool call to the sandbox", err)
	}
	for {
		line, err := e.next(ctx, executorSilence)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("calling sandbox tool %s: %w", tool, ctx.Err())
			}
			if errors.Is(err, errSilent) {
				// The call's answer may still come if the executor is resumed, but the run
				// cannot wait for it: every later call fails the same way.
				e.failed = fmt.Errorf("calling sandbox tool %s: the sandbox executor sent nothing for %s, not even its heartbeat: it was stopped (SIGSTOP, which a process in the sandbox may send it) or is stuck", tool, executorSilence)
				e.close()
				return "", e.failed
			}
			if errors.Is(err, errLineTooLong) {
				return "", e.refuse(tool, err.Error())
			}
			return "", s.brokenError(ctx, e, "calling sandbox tool "+tool, err)
		}
		resp, err := e.answer(tool, line)
		if err != nil {
			return "", err
		}
		if resp.Alive {
			continue // a heartbeat: the executor is working on the oldest pending call
		}
		if resp.ID != call.id {
			continue // the answer to a call abandoned when its ctx ended
		}
		if resp.Killed > 0 {
			e.killed.Add(int64(resp.Killed))
		}
		if tool == "Bash" {
			s.recordBash(ctx, arguments, resp.ExitCode)
		}
		if resp.Error != "" {
			return "", fmt.Errorf("calling sandbox tool %s: the executor could not answer: %s", tool, resp.Error)
		}
		return resp.Observation, nil
	}
}

// answer checks that line answers the oldest pending call and takes that call off the list,
// or is a heartbeat for that call (which leaves it there).
func (e *executorConn) answer(tool string, line []byte) (executor.Response, error) {
	var resp executor.Response
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil || dec.More() {
		return resp, e.refuse(tool, fmt.Sprintf("a line that is not a response: %.100q", line))
	}
	due := e.pending[0]
	switch {
	case resp.ID == "" && resp.Nonce == "" && strings.HasPrefix(resp.Observation, "ProtocolError: "):
		// What the executor says when it cannot read a request, which then never comes from
		// this host; refused like any other line that answers nothing.
		return resp, e.refuse(tool, fmt.Sprintf("a line that answers no call (%.100q) where call %s's answer was due", resp.Observation, due.id))
	case resp.ID != due.id:
		return resp, e.refuse(tool, fmt.Sprintf("a line with id %.40q where call %s's answer was due", resp.ID, due.id))
	case resp.Nonce == "":
		return resp, e.refuse(tool, fmt.Sprintf("a line for call %s without its nonce", due.id))
	case subtle.ConstantTimeCompare([]byte(resp.Nonce), []byte(due.nonce)) != 1:
		return resp, e.refuse(tool, fmt.Sprintf("a line for call %s with a wrong nonce", due.id))
	}
	if !resp.Alive {
		e.pending = e.pending[1:]
	}
	return resp, nil
}

// refuse records that the executor's output can no longer be trusted, closes the stream, and
// returns the error every call now gets.
func (e *executorConn) refuse(tool, what string) error {
	e.failed = fmt.Errorf("calling sandbox tool %s: %w: %s", tool, ErrUntrustedOutput, what)
	e.close()
	return e.failed
}

// LeftoversKilled is how many processes the executor has killed after Bash timeouts besides
// the timed-out commands' own process groups: background processes of earlier calls and
// whatever had left the group (a fork bomb that called setsid, a daemon).
func (s *Sandbox) LeftoversKilled() int {
	if e := s.exe.Load(); e != nil {
		return int(e.killed.Load())
	}
	return 0
}

// brokenError explains why the executor's stream ended: OOM, the executor's exit, or the
// container's disappearance, with the start and end of its stderr.
func (s *Sandbox) brokenError(ctx context.Context, e *executorConn, doing string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	what := "sandbox executor stream ended"
	if info, err := s.docker.ContainerInspect(ctx, s.id); err != nil {
		what = "sandbox container is gone"
	} else if info.State != nil && info.State.OOMKilled {
		what = "sandbox executor exited: OOM-killed"
	} else if info.State != nil && !info.State.Running {
		what = fmt.Sprintf("sandbox container stopped (exit code %d)", info.State.ExitCode)
	} else if code, err := s.execExitCode(ctx, e.execID); err == nil {
		what = fmt.Sprintf("sandbox executor exited with code %d", code)
		// 137 is SIGKILL: the OOM killer's signal, but also one any command may send the
		// executor (same user). The cgroup counts OOM kills, not whom they hit, and the
		// executor is the kernel's last choice (Bash commands run with oom_score_adj 1000),
		// so a count above zero does not make the executor its victim: both are named.
		if code == 137 {
			if n := s.cgroupOOMKills(ctx); n > 0 {
				what += fmt.Sprintf(" (SIGKILL: from the OOM killer, which killed in the sandbox %d times, or from a process in the sandbox)", n)
			}
		}
	}
	if text := e.stderr.Summary(300); text != "" {
		what += fmt.Sprintf(" (stderr: %q)", text)
	}
	return fmt.Errorf("%s: %s: %w", doing, what, cause)
}

// stderrBuffer keeps the first head and the last tail bytes written to it: a Go crash report
// opens with its cause ("fatal error: ...") and goes on for kilobytes of goroutine stacks, so
// the tail alone would hide why the executor died. It is written by one goroutine and read
// after the stream ended, so it locks.
type stderrBuffer struct {
	mu         sync.Mutex
	head, tail []byte
	headMax    int
	tailMax    int
	dropped    bool // bytes between head and tail were dropped
}

func (b *stderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > b.tailMax {
		b.dropped = true
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.tailMax:]...)
	}
	return n, nil
}

// Summary is the kept text for an error message: the first and last limit bytes, trimmed,
// with " ... " where something was left out.
func (b *stderrBuffer) Summary(limit int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := append(bytes.Clone(b.head), b.tail...)
	if !b.dropped && len(all) <= 2*limit {
		return string(bytes.TrimSpace(all))
	}
	first := all[:min(limit, len(b.head))]
	last := all[max(len(all)-limit, len(first)):]
	return string(bytes.TrimSpace(first)) + " ... " + string(bytes.TrimSpace(last))
}
