package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/runner/executor"
)

const (
	// maxResponseLine bounds one line from the executor. Observations are cut at 30,000
	// characters by the executor, so a longer line means the sandbox misbehaves.
	maxResponseLine = 8 << 20
	// stderrKeep is how much of the executor's stderr is kept to explain its death.
	stderrKeep = 4 << 10
)

// executorConn is the open stream to the executor running in the container.
type executorConn struct {
	execID  string
	att     types.HijackedResponse
	lines   chan []byte   // response lines, in order
	done    chan struct{} // closed when the stream ended
	readErr error         // why the stream ended; read after done is closed
	stderr  *tailBuffer
	nextID  uint64        // guarded by Sandbox.callMu
	stop    chan struct{} // closed by close
	once    sync.Once
}

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
		User:         s.cfg.User,
		WorkingDir:   s.cfg.Workdir,
		Cmd:          []string{executorPath, "-workdir", s.cfg.Workdir},
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
		stderr: &tailBuffer{max: stderrKeep},
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, e.stderr, att.Reader)
		pw.CloseWithError(err) // nil: the reader sees io.EOF
	}()
	go e.readLines(pr)

	ready, err := e.next(ctx)
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

// copyExecutor puts the binary at executorPath, owned by root and not writable by the sandbox user.
func (s *Sandbox) copyExecutor(ctx context.Context) error {
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

// readLine reads one '\n'-terminated line of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, fmt.Errorf("executor sent a line over %d bytes", max)
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

// next returns the next line from the executor, or why there is none.
func (e *executorConn) next(ctx context.Context) ([]byte, error) {
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
	}
}

// Call sends one tool call to the executor and returns its observation (Leaf's text, byte for
// byte). err is not nil only when the sandbox itself broke (the executor died, the container is
// gone or was OOM-killed) or ctx ended; a tool's own failure is an observation. After ctx ends
// during a call, the next call first skips the abandoned call's answer.
// Call implements leaf.Tools.
func (s *Sandbox) Call(ctx context.Context, tool, arguments string) (string, error) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	e := s.exe.Load()
	if e == nil {
		return "", errors.New("calling a sandbox tool: the executor is not started")
	}
	e.nextID++
	id := strconv.FormatUint(e.nextID, 10)
	req, err := json.Marshal(executor.Request{ID: id, Tool: tool, Arguments: arguments})
	if err != nil {
		return "", fmt.Errorf("encoding the tool call: %w", err)
	}
	select {
	case <-e.done:
		return "", s.brokenError(ctx, e, "calling a sandbox tool", io.EOF)
	default:
	}
	if _, err := e.att.Conn.Write(append(req, '\n')); err != nil {
		return "", s.brokenError(ctx, e, "sending a tool call to the sandbox", err)
	}
	for {
		line, err := e.next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("calling sandbox tool %s: %w", tool, ctx.Err())
			}
			return "", s.brokenError(ctx, e, "calling sandbox tool "+tool, err)
		}
		var resp executor.Response
		if err := json.Unmarshal(line, &resp); err != nil {
			return "", fmt.Errorf("calling sandbox tool %s: executor sent a malformed line %.200q", tool, line)
		}
		// An empty id answers a request the executor could not parse: ours, since calls are
		// sequential. Other ids belong to calls abandoned when their ctx ended.
		if resp.ID == id || resp.ID == "" {
			return resp.Observation, nil
		}
	}
}

// brokenError explains why the executor's stream ended: OOM, the executor's exit, or the
// container's disappearance, with the tail of its stderr.
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
		// 137 is SIGKILL; inside a memory-limited container that is the OOM killer's signal.
		if code == 137 && s.cgroupOOMKills(ctx) > 0 {
			what = "sandbox executor exited: OOM-killed"
		}
	}
	if tail := bytes.TrimSpace(e.stderr.Bytes()); len(tail) > 0 {
		what += fmt.Sprintf(" (stderr: %.500q)", tail)
	}
	return fmt.Errorf("%s: %s: %w", doing, what, cause)
}

// tailBuffer keeps the last max bytes written to it. It is written by one goroutine and read
// after the stream ended, so it locks.
type tailBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.b)
}
